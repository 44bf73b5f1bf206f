package main

import (
	"fmt"
	"strings"
)

// podSpec finds the pod spec of the workload kinds; nil for other kinds.
func podSpec(o *object) map[string]interface{} {
	var v interface{}
	switch o.Kind {
	case "Pod":
		v = get(o.Doc, "spec")
	case "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "ReplicationController":
		v = get(o.Doc, "spec", "template", "spec")
	case "CronJob":
		v = get(o.Doc, "spec", "jobTemplate", "spec", "template", "spec")
	}
	m, _ := v.(map[string]interface{})
	return m
}

// checkContainers: every container and initContainer locked down (read-only root, no privilege
// escalation, all capabilities dropped), with requests and limits, and with --app-version an
// image pinned to that version (or to a digest).
func checkContainers(objs []*object, appVersion string) []problem {
	var probs []problem
	for _, o := range objs {
		// A workload without a pod spec or containers is the apiserver's to refuse.
		spec := podSpec(o)
		if spec == nil {
			continue
		}
		for _, field := range []string{"initContainers", "containers"} {
			for i, c := range list(spec, field) {
				name := str(c, "name")
				if name == "" {
					name = fmt.Sprintf("#%d", i)
				}
				where := fmt.Sprintf("%s %q: ", strings.TrimSuffix(field, "s"), name)
				for _, msg := range containerProblems(c, appVersion) {
					probs = append(probs, problem{o.ID(), where + msg})
				}
			}
		}
	}
	return probs
}

func containerProblems(c interface{}, appVersion string) []string {
	var msgs []string
	sc := get(c, "securityContext")
	if sc == nil {
		msgs = append(msgs, "has no securityContext")
	} else {
		if get(sc, "readOnlyRootFilesystem") != true {
			msgs = append(msgs, "securityContext.readOnlyRootFilesystem is not true")
		}
		if get(sc, "allowPrivilegeEscalation") != false {
			msgs = append(msgs, "securityContext.allowPrivilegeEscalation is not false")
		}
		if !contains(strList(sc, "capabilities", "drop"), "ALL") {
			msgs = append(msgs, "securityContext.capabilities.drop does not contain ALL")
		}
	}
	for _, kind := range []string{"requests", "limits"} {
		if m, _ := get(c, "resources", kind).(map[string]interface{}); len(m) == 0 {
			msgs = append(msgs, "has no resources."+kind)
		}
	}
	if appVersion != "" {
		image := str(c, "image")
		if !strings.HasSuffix(image, ":"+appVersion) && !strings.Contains(image, "@sha256:") {
			msgs = append(msgs, fmt.Sprintf("image %q is not pinned to :%s", image, appVersion))
		}
	}
	return msgs
}
