package main

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A JSON Schema (draft-07) validator for values.schema.json, covering what chart schemas use.
// Helm validates with gojsonschema, which Debian does not package; the messages below are
// gojsonschema's English ones so that failures read as they do under helm. Not implemented:
// "format", "dependencies", "contentMediaType", remote $refs and $id-based resolution.

type schemaError struct {
	Field string // "(root)" or "a.b.0"
	Msg   string
}

func (e schemaError) String() string { return e.Field + ": " + e.Msg }

type schemaValidator struct {
	root interface{}
}

// validateValues returns the failures of values against a values.schema.json document, in a
// deterministic order.
func validateValues(schemaJSON []byte, values map[string]interface{}) ([]schemaError, error) {
	var root interface{}
	if err := json.Unmarshal(schemaJSON, &root); err != nil {
		return nil, fmt.Errorf("cannot parse values.schema.json: %v", err)
	}
	// Helm validates the JSON form of the values: --set's int64 becomes a JSON number like the rest.
	doc, err := jsonRoundTrip(values)
	if err != nil {
		return nil, err
	}
	v := &schemaValidator{root: root}
	return v.validate(root, doc, nil), nil
}

func fieldName(path []string) string {
	if len(path) == 0 {
		return "(root)"
	}
	return strings.Join(path, ".")
}

func child(path []string, elem string) []string {
	out := make([]string, len(path), len(path)+1)
	copy(out, path)
	return append(out, elem)
}

func jsonType(v interface{}) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if t == math.Trunc(t) && !math.IsInf(t, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []interface{}:
		return "array"
	case map[string]interface{}:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func typeMatches(want, got string) bool {
	return want == got || (want == "number" && got == "integer")
}

func num(v interface{}) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func jsonText(v interface{}) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// resolve follows a local $ref ("#", "#/definitions/x", "#/$defs/x", any JSON pointer).
func (v *schemaValidator) resolve(ref string) (interface{}, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("only local $ref is supported, not %q", ref)
	}
	cur := v.root
	ptr := strings.TrimPrefix(ref, "#")
	if ptr == "" {
		return cur, nil
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]interface{})
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		if cur, ok = m[tok]; !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	return cur, nil
}

func (v *schemaValidator) validate(schema interface{}, val interface{}, path []string) []schemaError {
	field := fieldName(path)
	switch s := schema.(type) {
	case bool:
		if !s {
			return []schemaError{{field, "False always fails validation"}}
		}
		return nil
	case map[string]interface{}:
		return v.validateObjectSchema(s, val, path, field)
	}
	return nil
}

func (v *schemaValidator) validateObjectSchema(s map[string]interface{}, val interface{}, path []string, field string) []schemaError {
	// draft-07: $ref replaces its siblings.
	if ref, ok := s["$ref"].(string); ok {
		target, err := v.resolve(ref)
		if err != nil {
			return []schemaError{{field, err.Error()}}
		}
		return v.validate(target, val, path)
	}
	var errs []schemaError
	add := func(msg string, a ...interface{}) { errs = append(errs, schemaError{field, fmt.Sprintf(msg, a...)}) }

	errs = append(errs, v.combinators(s, val, path, field)...)

	if t, ok := s["type"]; ok {
		var want []string
		switch tt := t.(type) {
		case string:
			want = []string{tt}
		case []interface{}:
			for _, x := range tt {
				if xs, ok := x.(string); ok {
					want = append(want, xs)
				}
			}
		}
		got := jsonType(val)
		matched := false
		for _, w := range want {
			if typeMatches(w, got) {
				matched = true
			}
		}
		if !matched && len(want) > 0 {
			expected := want[0]
			if len(want) > 1 {
				expected = "[" + strings.Join(want, ",") + "]"
			}
			add("Invalid type. Expected: %s, given: %s", expected, got)
			return errs // gojsonschema stops at a type error
		}
	}
	if enum, ok := s["enum"].([]interface{}); ok {
		found := false
		var allowed []string
		for _, e := range enum {
			allowed = append(allowed, jsonText(e))
			if reflect.DeepEqual(e, val) {
				found = true
			}
		}
		if !found {
			add("%s must be one of the following: %s", field, strings.Join(allowed, ", "))
		}
	}
	if c, ok := s["const"]; ok && !reflect.DeepEqual(c, val) {
		add("%s does not match: %s", field, jsonText(c))
	}

	switch tv := val.(type) {
	case float64:
		errs = append(errs, numberChecks(s, tv, field)...)
	case string:
		errs = append(errs, stringChecks(s, tv, field)...)
	case []interface{}:
		errs = append(errs, v.arrayChecks(s, tv, path, field)...)
	case map[string]interface{}:
		errs = append(errs, v.objectChecks(s, tv, path, field)...)
	}
	return errs
}

func (v *schemaValidator) combinators(s map[string]interface{}, val interface{}, path []string, field string) []schemaError {
	var errs []schemaError
	// best returns the errors of the sub-schema that came closest, which gojsonschema reports
	// beside the anyOf/oneOf failure so the user sees what to fix.
	best := func(results [][]schemaError) []schemaError {
		var b []schemaError
		for i, r := range results {
			if i == 0 || len(r) < len(b) {
				b = r
			}
		}
		return b
	}
	if subs, ok := s["anyOf"].([]interface{}); ok {
		var results [][]schemaError
		valid := false
		for _, sub := range subs {
			r := v.validate(sub, val, path)
			if len(r) == 0 {
				valid = true
				break
			}
			results = append(results, r)
		}
		if !valid {
			errs = append(errs, schemaError{field, "Must validate at least one schema (anyOf)"})
			errs = append(errs, best(results)...)
		}
	}
	if subs, ok := s["oneOf"].([]interface{}); ok {
		var results [][]schemaError
		nValid := 0
		for _, sub := range subs {
			r := v.validate(sub, val, path)
			if len(r) == 0 {
				nValid++
			} else {
				results = append(results, r)
			}
		}
		if nValid != 1 {
			errs = append(errs, schemaError{field, "Must validate one and only one schema (oneOf)"})
			if nValid == 0 {
				errs = append(errs, best(results)...)
			}
		}
	}
	if subs, ok := s["allOf"].([]interface{}); ok {
		var sub []schemaError
		for _, x := range subs {
			sub = append(sub, v.validate(x, val, path)...)
		}
		if len(sub) > 0 {
			errs = append(errs, schemaError{field, "Must validate all the schemas (allOf)"})
			errs = append(errs, sub...)
		}
	}
	if not, ok := s["not"]; ok && len(v.validate(not, val, path)) == 0 {
		errs = append(errs, schemaError{field, "Must not validate the schema (not)"})
	}
	if cond, ok := s["if"]; ok {
		if len(v.validate(cond, val, path)) == 0 {
			if then, ok := s["then"]; ok {
				if r := v.validate(then, val, path); len(r) > 0 {
					errs = append(errs, schemaError{field, `Must validate "then" as "if" was valid`})
					errs = append(errs, r...)
				}
			}
		} else if els, ok := s["else"]; ok {
			if r := v.validate(els, val, path); len(r) > 0 {
				errs = append(errs, schemaError{field, `Must validate "else" as "if" was not valid`})
				errs = append(errs, r...)
			}
		}
	}
	return errs
}

func numberChecks(s map[string]interface{}, f float64, field string) []schemaError {
	var errs []schemaError
	add := func(msg string, a ...interface{}) { errs = append(errs, schemaError{field, fmt.Sprintf(msg, a...)}) }
	// draft-04 spelled exclusiveMinimum as a boolean beside minimum; accept both forms.
	exMinBool, _ := s["exclusiveMinimum"].(bool)
	exMaxBool, _ := s["exclusiveMaximum"].(bool)
	if m, ok := num(s["minimum"]); ok {
		if exMinBool && f <= m {
			add("Must be greater than %s", fmtNum(m))
		} else if f < m {
			add("Must be greater than or equal to %s", fmtNum(m))
		}
	}
	if m, ok := num(s["exclusiveMinimum"]); ok && f <= m {
		add("Must be greater than %s", fmtNum(m))
	}
	if m, ok := num(s["maximum"]); ok {
		if exMaxBool && f >= m {
			add("Must be less than %s", fmtNum(m))
		} else if f > m {
			add("Must be less than or equal to %s", fmtNum(m))
		}
	}
	if m, ok := num(s["exclusiveMaximum"]); ok && f >= m {
		add("Must be less than %s", fmtNum(m))
	}
	if m, ok := num(s["multipleOf"]); ok && m > 0 {
		q := f / m
		if math.Abs(q-math.Round(q)) > 1e-9 {
			add("Must be a multiple of %s", fmtNum(m))
		}
	}
	return errs
}

func stringChecks(s map[string]interface{}, str string, field string) []schemaError {
	var errs []schemaError
	add := func(msg string, a ...interface{}) { errs = append(errs, schemaError{field, fmt.Sprintf(msg, a...)}) }
	n := utf8.RuneCountInString(str)
	if m, ok := num(s["minLength"]); ok && float64(n) < m {
		add("String length must be greater than or equal to %s", fmtNum(m))
	}
	if m, ok := num(s["maxLength"]); ok && float64(n) > m {
		add("String length must be less than or equal to %s", fmtNum(m))
	}
	if p, ok := s["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			add("invalid pattern %q in schema: %v", p, err)
		} else if !re.MatchString(str) {
			add("Does not match pattern '%s'", p)
		}
	}
	return errs
}

func (v *schemaValidator) arrayChecks(s map[string]interface{}, a []interface{}, path []string, field string) []schemaError {
	var errs []schemaError
	add := func(msg string, x ...interface{}) { errs = append(errs, schemaError{field, fmt.Sprintf(msg, x...)}) }
	if m, ok := num(s["minItems"]); ok && float64(len(a)) < m {
		add("Array must have at least %s items", fmtNum(m))
	}
	if m, ok := num(s["maxItems"]); ok && float64(len(a)) > m {
		add("Array must have at most %s items", fmtNum(m))
	}
	if u, _ := s["uniqueItems"].(bool); u {
	outer:
		for i := range a {
			for j := i + 1; j < len(a); j++ {
				if reflect.DeepEqual(a[i], a[j]) {
					add("array items[%d,%d] must be unique", i, j)
					break outer
				}
			}
		}
	}
	switch items := s["items"].(type) {
	case map[string]interface{}, bool:
		for i, x := range a {
			errs = append(errs, v.validate(items, x, child(path, strconv.Itoa(i)))...)
		}
	case []interface{}: // tuple form
		for i, x := range a {
			p := child(path, strconv.Itoa(i))
			if i < len(items) {
				errs = append(errs, v.validate(items[i], x, p)...)
			} else if extra, ok := s["additionalItems"]; ok {
				if b, isBool := extra.(bool); isBool && !b {
					add("No additional items allowed on array")
					break
				}
				errs = append(errs, v.validate(extra, x, p)...)
			}
		}
	}
	if c, ok := s["contains"]; ok {
		found := false
		for _, x := range a {
			if len(v.validate(c, x, path)) == 0 {
				found = true
				break
			}
		}
		if !found {
			add("At least one of the items must match")
		}
	}
	return errs
}

func (v *schemaValidator) objectChecks(s map[string]interface{}, o map[string]interface{}, path []string, field string) []schemaError {
	var errs []schemaError
	add := func(msg string, x ...interface{}) { errs = append(errs, schemaError{field, fmt.Sprintf(msg, x...)}) }
	if m, ok := num(s["minProperties"]); ok && float64(len(o)) < m {
		add("Must have at least %s properties", fmtNum(m))
	}
	if m, ok := num(s["maxProperties"]); ok && float64(len(o)) > m {
		add("Must have at most %s properties", fmtNum(m))
	}
	if req, ok := s["required"].([]interface{}); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				if _, present := o[name]; !present {
					add("%s is required", name)
				}
			}
		}
	}
	props, _ := s["properties"].(map[string]interface{})
	patterns := map[*regexp.Regexp]interface{}{}
	if pp, ok := s["patternProperties"].(map[string]interface{}); ok {
		for p, sub := range pp {
			if re, err := regexp.Compile(p); err == nil {
				patterns[re] = sub
			}
		}
	}
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := child(path, k)
		known := false
		if sub, ok := props[k]; ok {
			known = true
			errs = append(errs, v.validate(sub, o[k], p)...)
		}
		for re, sub := range patterns {
			if re.MatchString(k) {
				known = true
				errs = append(errs, v.validate(sub, o[k], p)...)
			}
		}
		if pn, ok := s["propertyNames"]; ok {
			if r := v.validate(pn, k, p); len(r) > 0 {
				add("Property %q does not match the schema", k)
			}
		}
		if known {
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				add("Additional property %s is not allowed", k)
			}
		case map[string]interface{}:
			errs = append(errs, v.validate(ap, o[k], p)...)
		}
	}
	return errs
}

// schemaFailure formats errors the way Helm reports them.
func schemaFailure(chartName string, errs []schemaError) error {
	var b strings.Builder
	fmt.Fprintf(&b, "values don't meet the specifications of the schema(s) in the following chart(s):\n%s:\n", chartName)
	for _, e := range errs {
		fmt.Fprintf(&b, "- %s\n", e)
	}
	return fmt.Errorf("%s", strings.TrimSuffix(b.String(), "\n"))
}
