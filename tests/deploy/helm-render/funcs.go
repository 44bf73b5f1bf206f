package main

import (
	"encoding/json"
	"errors"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	yaml "gopkg.in/yaml.v2"
)

// baseFuncMap is Helm's engine function map minus the functions that need the template set
// (include, tpl), which render.go binds per template set.
func baseFuncMap() template.FuncMap {
	f := sprig.TxtFuncMap()
	// Helm removes these: a chart must not read the environment of whoever renders it.
	delete(f, "env")
	delete(f, "expandenv")

	extra := template.FuncMap{
		"toYaml":        toYAML,
		"fromYaml":      fromYAML,
		"fromYamlArray": fromYAMLArray,
		"toJson":        toJSON,
		"fromJson":      fromJSON,
		"fromJsonArray": fromJSONArray,
		"required":      required,
		// helm template has no cluster: lookup always finds nothing.
		"lookup": func(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
			return map[string]interface{}{}, nil
		},
		// Placeholders so templates parse; render.go replaces them with closures over the set.
		"include": func(string, interface{}) (string, error) { return "", errors.New("not bound") },
		"tpl":     func(string, interface{}) (string, error) { return "", errors.New("not bound") },
	}
	for k, v := range extra {
		f[k] = v
	}
	return f
}

// toYAML is Helm's toYaml: sigs.k8s.io/yaml.Marshal (JSON marshal, then YAML from that JSON, so
// keys are sorted, struct json tags apply and numbers print as JSON numbers), with the trailing
// newline trimmed. Errors give "", as in Helm.
func toYAML(v interface{}) string {
	data, err := marshalYAML(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func marshalYAML(v interface{}) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	// Decoding JSON with the YAML decoder keeps integers as integers and strings as strings;
	// yaml.v2 then writes map keys sorted, which is exactly sigs.k8s.io/yaml's JSONToYAML.
	var obj interface{}
	if err := yaml.Unmarshal(j, &obj); err != nil {
		return nil, err
	}
	return yaml.Marshal(obj)
}

// fromYAML: a map, or {"Error": message} on failure (Helm never fails the render here).
func fromYAML(str string) map[string]interface{} {
	m := map[string]interface{}{}
	v, err := parseYAMLDoc([]byte(str))
	if err != nil {
		m["Error"] = err.Error()
		return m
	}
	if vm, ok := v.(map[string]interface{}); ok {
		return vm
	}
	if v != nil {
		m["Error"] = "error unmarshaling JSON: cannot unmarshal " + jsonTypeName(v) + " into Go value of type map[string]interface {}"
	}
	return m
}

func fromYAMLArray(str string) []interface{} {
	v, err := parseYAMLDoc([]byte(str))
	if err != nil {
		return []interface{}{err.Error()}
	}
	if a, ok := v.([]interface{}); ok {
		return a
	}
	if v == nil {
		return []interface{}{}
	}
	return []interface{}{"error unmarshaling JSON: cannot unmarshal " + jsonTypeName(v) + " into Go value of type []interface {}"}
}

func toJSON(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func fromJSON(str string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := json.Unmarshal([]byte(str), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromJSONArray(str string) []interface{} {
	a := []interface{}{}
	if err := json.Unmarshal([]byte(str), &a); err != nil {
		a = []interface{}{err.Error()}
	}
	return a
}

// required fails on nil and on the empty string only (0 and false pass), as Helm's does.
func required(warn string, val interface{}) (interface{}, error) {
	if val == nil {
		return val, errors.New(warn)
	}
	if s, ok := val.(string); ok && s == "" {
		return val, errors.New(warn)
	}
	return val, nil
}
