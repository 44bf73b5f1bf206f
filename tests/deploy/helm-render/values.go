package main

import (
	"encoding/json"
	"fmt"
	"os"

	yaml "gopkg.in/yaml.v2"
)

// parseYAMLDoc reads YAML the way Helm does (sigs.k8s.io/yaml): YAML is converted to JSON and
// decoded with encoding/json, so maps are map[string]interface{} and every number is a float64.
// That is why `{{ .Values.big }}` prints 1e+06 under real Helm; keeping it here keeps us honest.
func parseYAMLDoc(data []byte) (interface{}, error) {
	var raw interface{}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	return jsonRoundTrip(stringKeys(raw))
}

// parseYAMLMap parses a values-like document; an empty document is an empty map.
func parseYAMLMap(data []byte) (map[string]interface{}, error) {
	v, err := parseYAMLDoc(data)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return map[string]interface{}{}, nil
	}
	m, ok := v.(map[string]interface{})
	if !ok {
		return nil, fmt.Errorf("error unmarshaling JSON: cannot unmarshal %s into Go value of type map[string]interface {}", jsonTypeName(v))
	}
	return m, nil
}

func jsonTypeName(v interface{}) string {
	switch v.(type) {
	case []interface{}:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return fmt.Sprintf("%T", v)
}

// stringKeys turns yaml.v2's map[interface{}]interface{} into JSON-compatible maps. Non-string
// keys (YAML 1.1 `on:` is a bool) become their printed form, as sigs.k8s.io/yaml does.
func stringKeys(v interface{}) interface{} {
	switch t := v.(type) {
	case map[interface{}]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, val := range t {
			m[fmt.Sprint(k)] = stringKeys(val)
		}
		return m
	case map[string]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, val := range t {
			m[k] = stringKeys(val)
		}
		return m
	case []interface{}:
		out := make([]interface{}, len(t))
		for i, val := range t {
			out[i] = stringKeys(val)
		}
		return out
	}
	return v
}

func jsonRoundTrip(v interface{}) (interface{}, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out interface{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func readValuesFile(path string) (map[string]interface{}, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := parseYAMLMap(data)
	if err != nil {
		return nil, fmt.Errorf("failed to parse %s: %v", path, err)
	}
	return m, nil
}

// mergeMaps is Helm's merge of successive -f files: later files win, maps merge deeply, and a
// null is kept as a null so that coalesce can later delete the key from the chart defaults.
func mergeMaps(a, b map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if vm, ok := v.(map[string]interface{}); ok {
			if bv, ok := out[k].(map[string]interface{}); ok {
				out[k] = mergeMaps(bv, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// coalesce folds the chart defaults (src) under the user's values (dst), following Helm's
// chartutil.CoalesceTables: user values win; a user null deletes the default key; a user scalar
// where the chart has a table keeps the scalar (Helm only warns).
func coalesce(dst, src map[string]interface{}, warn func(string)) map[string]interface{} {
	if dst == nil {
		dst = map[string]interface{}{}
	}
	for key, val := range src {
		dv, ok := dst[key]
		switch {
		case ok && dv == nil:
			delete(dst, key)
		case !ok:
			dst[key] = deepCopy(val)
		default:
			sm, sIsMap := val.(map[string]interface{})
			dm, dIsMap := dv.(map[string]interface{})
			if sIsMap && dIsMap {
				coalesce(dm, sm, warn)
			} else if sIsMap && !dIsMap {
				warn(fmt.Sprintf("warning: cannot overwrite table with non table for %s (%v)", key, val))
			} else if dIsMap && val != nil {
				warn(fmt.Sprintf("warning: destination for %s is a table. Ignoring non-table value (%v)", key, val))
			}
		}
	}
	return dst
}

func deepCopy(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, val := range t {
			m[k] = deepCopy(val)
		}
		return m
	case []interface{}:
		out := make([]interface{}, len(t))
		for i, val := range t {
			out[i] = deepCopy(val)
		}
		return out
	}
	return v
}
