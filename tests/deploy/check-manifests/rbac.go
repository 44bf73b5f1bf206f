package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	yaml "gopkg.in/yaml.v3"
)

// rbacRule is a PolicyRule as written in a Role and in the --expect-rbac file.
type rbacRule struct {
	APIGroups       []string `yaml:"apiGroups"`
	Resources       []string `yaml:"resources"`
	Verbs           []string `yaml:"verbs"`
	ResourceNames   []string `yaml:"resourceNames"`
	NonResourceURLs []string `yaml:"nonResourceURLs"`
}

// loadExpectRBAC reads a map of role name (or name suffix after a '-') to its exact rules.
func loadExpectRBAC(path string) (map[string][]rbacRule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	exp := map[string][]rbacRule{}
	if err := yaml.Unmarshal(data, &exp); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return exp, nil
}

// expand turns rules into the set of single permissions they grant, so that two rule lists that
// grant the same thing compare equal however they are grouped or ordered. `""` prints as core.
func expand(rules []rbacRule) map[string]bool {
	set := map[string]bool{}
	orEmpty := func(l []string) []string {
		if len(l) == 0 {
			return []string{""}
		}
		return l
	}
	for _, r := range rules {
		for _, v := range r.Verbs {
			for _, u := range r.NonResourceURLs {
				set[fmt.Sprintf("nonResourceURL %s %s", u, v)] = true
			}
			if len(r.NonResourceURLs) > 0 && len(r.Resources) == 0 {
				continue
			}
			for _, g := range orEmpty(r.APIGroups) {
				if g == "" {
					g = `""`
				}
				for _, res := range r.Resources {
					for _, rn := range orEmpty(r.ResourceNames) {
						p := fmt.Sprintf("%s %s %s", g, res, v)
						if rn != "" {
							p += " name=" + rn
						}
						set[p] = true
					}
				}
			}
		}
	}
	return set
}

func decodeRules(o *object) ([]rbacRule, error) {
	raw, err := yaml.Marshal(get(o.Doc, "rules"))
	if err != nil {
		return nil, err
	}
	var rules []rbacRule
	err = yaml.Unmarshal(raw, &rules)
	return rules, err
}

// expectedKey finds the expectation for a role: its full name, or a key that ends its name after
// a '-' (so "node" matches "iogate-node" and "rel-iogate-node").
func expectedKey(name string, exp map[string][]rbacRule) (string, bool) {
	if _, ok := exp[name]; ok {
		return name, true
	}
	best := ""
	for k := range exp {
		if strings.HasSuffix(name, "-"+k) && len(k) > len(best) {
			best = k
		}
	}
	return best, best != ""
}

// checkRBACRules: every Role and ClusterRole is expected and grants exactly the expected
// permissions, nothing missing and nothing more.
func checkRBACRules(objs []*object, exp map[string][]rbacRule) []problem {
	var probs []problem
	for _, o := range objs {
		if o.Kind != "Role" && o.Kind != "ClusterRole" {
			continue
		}
		key, ok := expectedKey(o.Name, exp)
		if !ok {
			probs = append(probs, problem{o.ID(), "is not in the expected RBAC"})
			continue
		}
		if get(o.Doc, "aggregationRule") != nil {
			probs = append(probs, problem{o.ID(), "has an aggregationRule (its rules are not fixed)"})
		}
		rules, err := decodeRules(o)
		if err != nil {
			probs = append(probs, problem{o.ID(), "unreadable rules: " + err.Error()})
			continue
		}
		got, want := expand(rules), expand(exp[key])
		for _, p := range sortedDiff(got, want) {
			probs = append(probs, problem{o.ID(), "grants " + p + ", not expected for " + key})
		}
		for _, p := range sortedDiff(want, got) {
			probs = append(probs, problem{o.ID(), "lacks " + p + ", expected for " + key})
		}
	}
	return probs
}

func sortedDiff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// checkBindings: every RoleBinding/ClusterRoleBinding refers to a role of the input and binds
// ServiceAccounts of the input, so no binding grants to something this deployment did not make.
// The apiserver accepts a binding to a role or account that does not exist; the shape of roleRef
// and subjects (kinds, a ClusterRoleBinding's subject namespace) it validates, so not here.
func checkBindings(objs []*object) []problem {
	present := map[string]bool{}
	for _, o := range objs {
		present[o.Kind+"/"+o.Namespace+"/"+o.Name] = true
	}
	var probs []problem
	for _, o := range objs {
		if o.Kind != "RoleBinding" && o.Kind != "ClusterRoleBinding" {
			continue
		}
		refKind, refName := str(o.Doc, "roleRef", "kind"), str(o.Doc, "roleRef", "name")
		refNS := "-"
		if refKind == "Role" {
			refNS = o.Namespace
		}
		if !present[refKind+"/"+refNS+"/"+refName] {
			probs = append(probs, problem{o.ID(), fmt.Sprintf("roleRef %s %s is not in the input", refKind, refName)})
		}
		subjects := list(o.Doc, "subjects")
		if len(subjects) == 0 {
			probs = append(probs, problem{o.ID(), "has no subjects"})
		}
		for _, s := range subjects {
			kind, name, ns := str(s, "kind"), str(s, "name"), str(s, "namespace")
			if kind != "ServiceAccount" {
				probs = append(probs, problem{o.ID(), fmt.Sprintf("subject %s %s is not a ServiceAccount", kind, name)})
				continue
			}
			if ns == "" && o.Kind == "RoleBinding" {
				ns = o.Namespace
			}
			if !present["ServiceAccount/"+ns+"/"+name] {
				probs = append(probs, problem{o.ID(), fmt.Sprintf("subject ServiceAccount %s/%s is not in the input", ns, name)})
			}
		}
	}
	return probs
}
