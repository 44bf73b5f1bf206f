#!/usr/bin/env bash
# background.sh CMD [ARG...]: runs CMD at the lowest CPU priority it can have here, for the builds
# ctest runs beside the tests (tests/CMakeLists.txt): nice 19 and, where the scheduler groups tasks
# by session (autogroup: /proc/sys/kernel/sched_autogroup_enabled is 1), in a session of its own
# whose group is niced 19 too. Sessions share the CPU equally whatever their tasks' nice, so a
# nice-19 compile in ctest's session still took half the machine from the Docker Engine's build
# (a session of the engine's) and from the control planes beside it. CMD's exit status is this
# script's; TERM, INT or HUP (ctest's timeout) end CMD's whole process group.
set -u
if [[ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" != 1 ]]; then
  exec nice -n 19 "$@"
fi
# Started with & from a script, the child is no group leader, so setsid makes it a session (and
# group) leader without forking: its pid is the group to signal.
setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 "$@"' background "$@" &
child=$!
trap 'kill -TERM -- "-$child" 2>/dev/null' TERM INT HUP
while :; do
  wait "$child"
  rc=$?
  # wait returns early (above 128) when a trapped signal arrives: wait on until the child is gone.
  kill -0 "$child" 2>/dev/null || exit "$rc"
done
