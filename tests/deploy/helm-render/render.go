package main

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"text/template"
)

// renderTemplates follows Helm's pkg/engine: every template file (partials included) is parsed
// into one set so that define/include work across files; every file except partials ("_*") is
// executed with the top-level object; missingkey=zero, and "<no value>" is removed from the output
// because Go still prints it for missing map keys reached through interfaces.
// Returns "iogate/templates/x.yaml" -> rendered text.
func renderTemplates(c *Chart, top map[string]interface{}) (map[string]string, error) {
	t := template.New("gotpl").Option("missingkey=zero")
	included := map[string]int{}
	funcs := baseFuncMap()
	funcs["include"] = includeFunc(t, included)
	funcs["tpl"] = tplFunc(t, included)
	t.Funcs(funcs)

	names := make([]string, 0, len(c.Templates))
	for rel := range c.Templates {
		names = append(names, path.Join(c.Meta.Name, rel))
	}
	sort.Strings(names)
	for _, name := range names {
		rel := strings.TrimPrefix(name, c.Meta.Name+"/")
		if _, err := t.New(name).Parse(c.Templates[rel]); err != nil {
			return nil, cleanupParseError(name, err)
		}
	}

	out := map[string]string{}
	basePath := path.Join(c.Meta.Name, "templates")
	for _, name := range names {
		if strings.HasPrefix(path.Base(name), "_") {
			continue
		}
		top["Template"] = map[string]interface{}{"Name": name, "BasePath": basePath}
		var buf strings.Builder
		if err := t.ExecuteTemplate(&buf, name, top); err != nil {
			return nil, cleanupExecError(name, err)
		}
		out[name] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return out, nil
}

// Helm caps include recursion so a self-including template fails instead of overflowing.
const recursionMax = 1000

func includeFunc(t *template.Template, included map[string]int) func(string, interface{}) (string, error) {
	return func(name string, data interface{}) (string, error) {
		if included[name] > recursionMax {
			return "", fmt.Errorf("unable to execute template: rendering template has a nested reference name: %s", name)
		}
		included[name]++
		defer func() { included[name]-- }()
		var buf strings.Builder
		err := t.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
}

// tplFunc renders a string as a template against vals, with access to every named template, on a
// clone of the set so the string cannot redefine the chart's templates.
func tplFunc(parent *template.Template, included map[string]int) func(string, interface{}) (string, error) {
	return func(text string, vals interface{}) (string, error) {
		t, err := parent.Clone()
		if err != nil {
			return "", fmt.Errorf("cannot clone template: %v", err)
		}
		t.Option("missingkey=zero")
		t.Funcs(template.FuncMap{"include": includeFunc(t, included), "tpl": tplFunc(t, included)})
		t, err = t.New(parent.Name()).Parse(text)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %v", text, err)
		}
		var buf strings.Builder
		if err := t.Execute(&buf, vals); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %v", text, err)
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
}

// Go reports `template: NAME:LINE:COL: executing "NAME" at <...>: error calling required: MSG`;
// Helm shortens that to `execution error at (NAME:LINE:COL): MSG`, keeping the location.
var callErr = regexp.MustCompile(`error calling \w+: `)

func cleanupExecError(name string, err error) error {
	if _, ok := err.(template.ExecError); !ok {
		return fmt.Errorf("execution error in (%s): %v", name, err)
	}
	// An error inside an included template nests: report the innermost location, which is
	// where the failing action is.
	text := err.Error()
	locs := execLoc.FindAllStringSubmatchIndex(text, -1)
	if locs == nil {
		return fmt.Errorf("execution error in (%s): %v", name, err)
	}
	last := locs[len(locs)-1]
	location := text[last[2]:last[3]]
	msg := text[last[1]:]
	if loc := callErr.FindAllStringIndex(msg, -1); loc != nil {
		msg = msg[loc[len(loc)-1][1]:]
	}
	return fmt.Errorf("execution error at (%s): %s", location, msg)
}

var execLoc = regexp.MustCompile(`template: ([^: ]+:\d+(?::\d+)?): `)

func cleanupParseError(name string, err error) error {
	tokens := strings.SplitN(err.Error(), ": ", 3)
	if len(tokens) != 3 {
		return fmt.Errorf("parse error in (%s): %v", name, err)
	}
	return fmt.Errorf("parse error at (%s): %s", tokens[1], tokens[2])
}
