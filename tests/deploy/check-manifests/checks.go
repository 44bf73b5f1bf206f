package main

import "fmt"

type problem struct {
	ID  string // Kind/namespace/name
	Msg string
}

func (p problem) String() string { return p.ID + ": " + p.Msg }

type config struct {
	appVersion    string
	expectRBAC    map[string][]rbacRule // nil: RBAC rules not checked
	requireLabels bool
}

// check runs every rule over the whole input; each rule is in its own file.
func check(objs []*object, cfg config) []problem {
	var probs []problem
	probs = append(probs, checkDuplicates(objs)...)
	probs = append(probs, checkContainers(objs, cfg.appVersion)...)
	probs = append(probs, checkWebhooks(objs)...)
	probs = append(probs, checkBindings(objs)...)
	if cfg.expectRBAC != nil {
		probs = append(probs, checkRBACRules(objs, cfg.expectRBAC)...)
	}
	if cfg.requireLabels {
		probs = append(probs, checkLabels(objs)...)
	}
	return probs
}

// checkDuplicates: no object twice. Neither helm nor kubectl apply refuses a second copy in one
// manifest: it silently replaces the first. (A missing apiVersion, kind or name is left to them:
// both refuse such a document.)
func checkDuplicates(objs []*object) []problem {
	var probs []problem
	seen := map[string]bool{}
	for _, o := range objs {
		key := o.APIVersion + " " + o.ID()
		if seen[key] {
			probs = append(probs, problem{o.ID(), "appears more than once"})
		}
		seen[key] = true
	}
	return probs
}

// standardLabels are the app.kubernetes.io labels every object must carry with --require-labels.
// helm.sh/chart is not among them: kustomize output has no chart.
var standardLabels = []string{
	"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
	"app.kubernetes.io/component", "app.kubernetes.io/managed-by",
}

func checkLabels(objs []*object) []problem {
	var probs []problem
	for _, o := range objs {
		labels, _ := get(o.Doc, "metadata", "labels").(map[string]interface{})
		for _, l := range standardLabels {
			if v, ok := labels[l]; !ok || fmt.Sprint(v) == "" {
				probs = append(probs, problem{o.ID(), "missing label " + l})
			}
		}
	}
	return probs
}
