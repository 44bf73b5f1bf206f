/* The pod sandbox's pause process for the e2e node (tests/e2e/node_lib.sh): it holds the pod's
 * namespaces open and does nothing else. PID 1 of the sandbox, so it reaps any child re-parented to
 * it (a pod sharing its process namespace) and exits at once, 0, on SIGTERM or SIGINT (the runtime
 * stopping the sandbox). Built static, it is the only file of the image (Dockerfile beside it).
 * Written here because no registry gives registry.k8s.io/pause on these machines. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
    puts("pause (iogate e2e) 1.0");
    return 0;
  }
  struct sigaction stop = {.sa_handler = on_stop};
  struct sigaction child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &stop, NULL) < 0 || sigaction(SIGTERM, &stop, NULL) < 0 ||
      sigaction(SIGCHLD, &child, NULL) < 0) {
    perror("pause: sigaction");
    return 1;
  }
  for (;;) pause();
  return 42; /* not reached */
}
