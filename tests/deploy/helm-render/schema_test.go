package main

import (
	"strings"
	"testing"
)

const testSchema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "required": ["image"],
  "additionalProperties": false,
  "definitions": {
    "port": {"type": "integer", "minimum": 1, "maximum": 65535}
  },
  "properties": {
    "image": {
      "type": "object",
      "properties": {
        "repository": {"type": "string", "minLength": 1, "pattern": "^[a-z0-9./-]+$"},
        "tag": {"type": ["string", "null"]},
        "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]}
      }
    },
    "port": {"$ref": "#/definitions/port"},
    "replicas": {"type": "integer", "exclusiveMinimum": 0},
    "paths": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    "mode": {"oneOf": [{"const": "a"}, {"type": "integer"}]},
    "extra": {"type": "object", "additionalProperties": {"type": "boolean"}}
  }
}`

func schemaChart(t *testing.T) string {
	return writeChart(t, map[string]string{
		"values.schema.json": testSchema,
		"values.yaml":        "image: {repository: iogate, tag: null, pullPolicy: IfNotPresent}\nport: 9560\nreplicas: 2\npaths: [/data]\nmode: a\nextra: {x: true}\n",
		"templates/a.yaml":   "kind: A\n",
	})
}

func TestSchemaAcceptsDefaults(t *testing.T) {
	mustRender(t, schemaChart(t))
	mustRender(t, schemaChart(t), "--set", "mode=3,port=443")
}

func TestSchemaFailures(t *testing.T) {
	cases := []struct {
		set, want string
	}{
		{"port=x", "- port: Invalid type. Expected: integer, given: string"},
		{"port=0", "- port: Must be greater than or equal to 1"},
		{"port=70000", "- port: Must be less than or equal to 65535"},
		{"replicas=0", "- replicas: Must be greater than 0"},
		{"image.tag=1", "- image.tag: Invalid type. Expected: [string,null], given: integer"},
		{"image.pullPolicy=Sometimes", `- image.pullPolicy: image.pullPolicy must be one of the following: "Always", "IfNotPresent", "Never"`},
		{"image.repository=Bad", "- image.repository: Does not match pattern '^[a-z0-9./-]+$'"},
		{"bogus=1", "- (root): Additional property bogus is not allowed"},
		{"image=null", "- (root): image is required"},
		{"paths=null", ""}, // deleting an optional key is fine
		{"paths[0]=1", "- paths.0: Invalid type. Expected: string, given: integer"},
		{"mode=b", "- mode: Must validate one and only one schema (oneOf)"},
		{"extra.y=1", "- extra.y: Invalid type. Expected: boolean, given: integer"},
	}
	for _, c := range cases {
		dir := schemaChart(t)
		if c.want == "" {
			mustRender(t, dir, "--set", c.set)
			continue
		}
		errs := mustFail(t, dir, c.want, "--set", c.set)
		if !strings.HasPrefix(errs, "Error: values don't meet the specifications of the schema(s) in the following chart(s):\ndemo:\n- ") {
			t.Errorf("%s: helm's header missing in %q", c.set, errs)
		}
	}
	// An empty list fails minItems.
	mustFail(t, schemaChart(t), "- paths: Array must have at least 1 items", "--set", "paths={}")
}

func TestSchemaBooleanAndCombinators(t *testing.T) {
	check := func(schema string, val interface{}, want int) {
		t.Helper()
		errs, err := validateValues([]byte(schema), map[string]interface{}{"v": val})
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) != want {
			t.Errorf("%s with %v: %d errors %v, want %d", schema, val, len(errs), errs, want)
		}
	}
	check(`{"properties": {"v": false}}`, 1, 1)
	check(`{"properties": {"v": true}}`, 1, 0)
	check(`{"properties": {"v": {"anyOf": [{"type": "string"}, {"type": "boolean"}]}}}`, 1.0, 2)
	check(`{"properties": {"v": {"allOf": [{"minimum": 2}, {"maximum": 3}]}}}`, 5.0, 2)
	check(`{"properties": {"v": {"not": {"type": "string"}}}}`, "s", 1)
	check(`{"properties": {"v": {"$ref": "#/$defs/s"}}, "$defs": {"s": {"maxLength": 2}}}`, "abc", 1)
	check(`{"properties": {"v": {"items": {"type": "string"}, "uniqueItems": true}}}`, []interface{}{"a", "a"}, 1)
	check(`{"properties": {"v": {"if": {"type": "string"}, "then": {"minLength": 2}}}}`, "a", 2)
}
