package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"

	yaml "gopkg.in/yaml.v3"
)

// object is one Kubernetes object of the input.
type object struct {
	APIVersion string
	Kind       string
	Namespace  string // "-" for cluster-scoped kinds and for namespaced objects with no namespace and no --namespace
	Name       string
	Doc        map[string]interface{}
}

func (o *object) ID() string {
	kind, name := o.Kind, o.Name
	if kind == "" {
		kind = "?"
	}
	if name == "" {
		name = "?"
	}
	return kind + "/" + o.Namespace + "/" + name
}

// clusterScoped are the built-in kinds without a namespace; their namespace prints as "-".
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "MutatingWebhookConfiguration": true,
	"ValidatingWebhookConfiguration": true, "CustomResourceDefinition": true,
	"PriorityClass": true, "StorageClass": true, "CSIDriver": true, "CSINode": true,
	"VolumeAttachment": true, "IngressClass": true, "RuntimeClass": true, "APIService": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"ClusterIssuer": true, "FlowSchema": true, "PriorityLevelConfiguration": true,
}

// parseObjects reads every YAML document; empty documents (comments only) are skipped, as
// kubectl does. defaultNS stands in for a missing metadata.namespace on namespaced kinds: a chart
// leaves it to `helm install -n`, kustomize writes it.
func parseObjects(data []byte, defaultNS string) ([]*object, []problem, error) {
	var objs []*object
	var probs []problem
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var doc interface{}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("document %d: %v", i, err)
		}
		if doc == nil {
			continue
		}
		m, ok := doc.(map[string]interface{})
		if !ok {
			probs = append(probs, problem{fmt.Sprintf("document %d", i), "is not a mapping"})
			continue
		}
		o := &object{Doc: m}
		o.APIVersion, _ = m["apiVersion"].(string)
		o.Kind, _ = m["kind"].(string)
		o.Name = str(m, "metadata", "name")
		o.Namespace = str(m, "metadata", "namespace")
		if o.Namespace == "" {
			o.Namespace = defaultNS
		}
		if clusterScoped[o.Kind] || o.Namespace == "" {
			o.Namespace = "-"
		}
		objs = append(objs, o)
	}
	return objs, probs, nil
}

func get(v interface{}, path ...string) interface{} {
	for _, p := range path {
		m, ok := v.(map[string]interface{})
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func str(v interface{}, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

func list(v interface{}, path ...string) []interface{} {
	l, _ := get(v, path...).([]interface{})
	return l
}

func strList(v interface{}, path ...string) []string {
	var out []string
	for _, x := range list(v, path...) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// summary is one line per object, "Kind namespace/name", sorted: two renderings of the same
// deployment (chart and kustomize) must give the same summary.
func summary(objs []*object) []string {
	var lines []string
	for _, o := range objs {
		lines = append(lines, fmt.Sprintf("%s %s/%s", o.Kind, o.Namespace, o.Name))
	}
	sort.Strings(lines)
	return lines
}
