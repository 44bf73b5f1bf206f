package main

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	yaml "gopkg.in/yaml.v2"
)

// manifest is one YAML document of a rendered template.
type manifest struct {
	Source  string // "iogate/templates/x.yaml"
	Content string
	Kind    string
	Hook    bool
}

// Helm's releaseutil.SplitManifests separator.
var docSep = regexp.MustCompile(`(?:^|\s*\n)---\s*`)

type simpleHead struct {
	Kind     string `yaml:"kind"`
	Metadata *struct {
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
}

// splitManifests turns rendered templates into documents the way `helm template` prints them:
// each document trimmed, empty ones dropped, and each parsed so that invalid YAML fails the
// render naming its template (Helm: "YAML parse error on ...").
func splitManifests(rendered map[string]string, notesSuffix string) ([]manifest, error) {
	names := make([]string, 0, len(rendered))
	for n := range rendered {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []manifest
	for _, name := range names {
		if strings.HasSuffix(name, notesSuffix) {
			continue
		}
		for _, d := range docSep.Split(strings.TrimSpace(rendered[name]), -1) {
			d = strings.TrimSpace(d)
			if d == "" {
				continue
			}
			var head simpleHead
			if err := yaml.Unmarshal([]byte(d), &head); err != nil {
				return nil, fmt.Errorf("YAML parse error on %s: %v", name, err)
			}
			m := manifest{Source: name, Content: d, Kind: head.Kind}
			if head.Metadata != nil {
				_, m.Hook = head.Metadata.Annotations["helm.sh/hook"]
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// filterShowOnly keeps the documents of the named templates ("templates/x.yaml" or
// "iogate/templates/x.yaml", globs allowed), failing like helm when one matches nothing.
func filterShowOnly(ms []manifest, chartName string, only []string) ([]manifest, error) {
	if len(only) == 0 {
		return ms, nil
	}
	var out []manifest
	for _, pattern := range only {
		full := pattern
		if !strings.HasPrefix(pattern, chartName+"/") {
			full = path.Join(chartName, pattern)
		}
		found := false
		for _, m := range ms {
			if ok, _ := path.Match(full, m.Source); ok {
				out = append(out, m)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("could not find template %s in chart", pattern)
		}
	}
	return out, nil
}

// installOrder is Helm's releaseutil.InstallOrder, used by --helm-order.
var installOrder = []string{
	"PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange",
	"PodSecurityPolicy", "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList",
	"ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
	"CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
	"ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList", "Service",
	"DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
	"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
	"APIService",
}

// orderManifests puts hooks after the other documents (as helm template prints them) and, with
// byKind, sorts by Helm's install order (unknown kinds last, by kind name), stable otherwise.
func orderManifests(ms []manifest, byKind bool) []manifest {
	rank := map[string]int{}
	for i, k := range installOrder {
		rank[k] = i
	}
	less := func(a, b manifest) bool {
		if a.Hook != b.Hook {
			return !a.Hook
		}
		if !byKind {
			return false
		}
		ra, aok := rank[a.Kind]
		rb, bok := rank[b.Kind]
		switch {
		case aok && bok:
			return ra < rb
		case aok != bok:
			return aok
		}
		return a.Kind < b.Kind
	}
	sort.SliceStable(ms, func(i, j int) bool { return less(ms[i], ms[j]) })
	return ms
}

func formatManifests(ms []manifest) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Source, m.Content)
	}
	return b.String()
}
