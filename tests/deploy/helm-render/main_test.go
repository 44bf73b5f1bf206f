package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeChart makes a chart directory from path -> contents; Chart.yaml defaults to "demo".
func writeChart(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if _, ok := files["Chart.yaml"]; !ok {
		files["Chart.yaml"] = "apiVersion: v2\nname: demo\nversion: 0.2.0\nappVersion: \"1.2.3\"\n"
	}
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// render runs the CLI and returns stdout, stderr and the exit code.
func render(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	rc := run(append(args, "rel", dir), &out, &errb)
	return out.String(), errb.String(), rc
}

func mustRender(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errs, rc := render(t, dir, args...)
	if rc != 0 {
		t.Fatalf("rc=%d stderr=%s", rc, errs)
	}
	return out
}

func mustFail(t *testing.T, dir string, want string, args ...string) string {
	t.Helper()
	out, errs, rc := render(t, dir, args...)
	if rc != 1 {
		t.Fatalf("want rc=1, got %d; out=%s", rc, out)
	}
	if !strings.Contains(errs, want) {
		t.Fatalf("stderr %q does not contain %q", errs, want)
	}
	return errs
}

func TestIncludeNindentAndSources(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"templates/_helpers.tpl": `{{- define "demo.labels" -}}
app: {{ .Chart.Name }}
version: {{ .Chart.AppVersion | quote }}
{{- end }}`,
		"templates/b.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-b
  labels:
    {{- include "demo.labels" . | nindent 4 }}`,
		"templates/c.yaml": `{{- if false }}
kind: Never
{{- end }}
---
# the empty document above is dropped`,
		"templates/_partial.yaml": "kind: NotRendered\n",
		"templates/a.yaml":        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n",
	})
	got := mustRender(t, dir, "-n", "ns")
	want := `---
# Source: demo/templates/a.yaml
apiVersion: v1
kind: Secret
metadata:
  name: a
---
# Source: demo/templates/b.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: rel-b
  labels:
    app: demo
    version: "1.2.3"
---
# Source: demo/templates/c.yaml
# the empty document above is dropped
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestToYamlNested(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"values.yaml":      "res:\n  zeta: 1\n  alpha:\n    list: [b, a, {k: v, c: \"yes\"}]\n    num: 1.5\n    empty: {}\n  s: \"010\"\n",
		"templates/x.yaml": "x:\n  {{- toYaml .Values.res | nindent 2 }}\nend: {{ toYaml .Values.res.zeta }}|\n",
	})
	got := mustRender(t, dir)
	want := `x:
  alpha:
    empty: {}
    list:
    - b
    - a
    - c: "yes"
      k: v
    num: 1.5
  s: "010"
  zeta: 1
end: 1|`
	if !strings.Contains(got, want) {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// Values files go through JSON like sigs.k8s.io/yaml: integers are float64 and big ones print in
// exponent form, exactly the surprise real helm gives; --set integers stay int64.
// YAML 1.1 as sigs.k8s.io/yaml reads it: y/n/yes/no/on/off are booleans, keys included.
func TestYAML11Booleans(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"values.yaml":      "m: {n: 1, on: y, s: \"y\"}\n",
		"templates/x.yaml": "{{ toYaml .Values.m }}\n",
	})
	if got := mustRender(t, dir); !strings.Contains(got, "\"false\": 1\ns: \"y\"\n\"true\": true") {
		t.Fatalf("got\n%s", got)
	}
}

func TestNumbersLikeHelm(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"values.yaml":      "big: 1000000\nsmall: 42\n",
		"templates/x.yaml": "big: {{ .Values.big }}\nsmall: {{ .Values.small }}\nset: {{ .Values.setbig }}\nkind: {{ kindOf .Values.small }}/{{ kindOf .Values.setbig }}\n",
	})
	got := mustRender(t, dir, "--set", "setbig=1000000")
	for _, w := range []string{"big: 1e+06", "small: 42", "set: 1000000", "kind: float64/int64"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
}

func TestSetTypingAndNullDeletion(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"values.yaml":      "keep: 1\ndrop: {a: 1}\nnested: {x: 1, y: 2}\n",
		"templates/x.yaml": "{{ toYaml .Values }}\n",
	})
	over := filepath.Join(t.TempDir(), "over.yaml")
	os.WriteFile(over, []byte("nested:\n  y: null\n  z: 3\n"), 0o644)
	got := mustRender(t, dir, "-f", over,
		"--set", "drop=null,i=5,z=0,lead=010,f=1.5,b=true,B=FALSE,list={a,2,true}",
		"--set", "arr[1].name=x,esc=a\\,b,dot\\.key=v",
		"--set-string", "str=5")
	want := `B: false
arr:
- null
- name: x
b: true
dot.key: v
esc: a,b
f: "1.5"
i: 5
keep: 1
lead: "010"
list:
- a
- 2
- true
nested:
  x: 1
  z: 3
str: "5"
z: 0`
	if !strings.Contains(got, want) {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestSetParserErrors(t *testing.T) {
	for _, bad := range []string{"a", "a.b", "a=1,b", "a[x]=1", "a={1,2"} {
		if err := parseSet(bad, map[string]interface{}{}, false); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	m := map[string]interface{}{}
	if err := parseSet("a.b.c=1,a.b.d=x", m, false); err != nil {
		t.Fatal(err)
	}
	want := map[string]interface{}{"a": map[string]interface{}{"b": map[string]interface{}{"c": int64(1), "d": "x"}}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got %#v", m)
	}
}

func TestRequiredAndFail(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"templates/_h.tpl": `{{- define "demo.img" -}}{{ required "image.repository is required" .Values.image.repository }}{{- end }}`,
		"templates/x.yaml": "a: 1\n\nimage: {{ include \"demo.img\" . }}\n",
		"values.yaml":      "image: {repository: \"\"}\nflag: false\n",
	})
	// The innermost location is reported: the partial's line, where required is.
	mustFail(t, dir, "Error: execution error at (demo/templates/_h.tpl:1:28): image.repository is required")
	if got := mustRender(t, dir, "--set", "image.repository=r"); !strings.Contains(got, "image: r") {
		t.Fatal(got)
	}
	// 0 and false satisfy required, as in helm.
	dir2 := writeChart(t, map[string]string{
		"templates/x.yaml": "a: {{ required \"m\" .Values.flag }}\n{{ if .Values.boom }}{{ fail \"boom was set\" }}{{ end }}\n",
		"values.yaml":      "flag: false\n",
	})
	mustRender(t, dir2)
	mustFail(t, dir2, "execution error at (demo/templates/x.yaml:2:24): boom was set", "--set", "boom=true")
}

func TestMissingKey(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"templates/x.yaml": "a: \"{{ .Values.nope }}\"\nb: \"{{ .Release.Nope }}\"\n",
	})
	if got := mustRender(t, dir); !strings.Contains(got, "a: \"\"\nb: \"\"") {
		t.Fatalf("missing keys must render empty, got\n%s", got)
	}
	// A field of a missing map is a nil pointer, as in helm.
	dir2 := writeChart(t, map[string]string{"templates/x.yaml": "a: {{ .Values.no.such }}\n"})
	mustFail(t, dir2, "nil pointer evaluating interface {}.such")
	// .Chart is a struct: a misspelt field fails the render.
	dir3 := writeChart(t, map[string]string{"templates/x.yaml": "a: {{ .Chart.Appversion }}\n"})
	mustFail(t, dir3, "can't evaluate field Appversion")
}

func TestEnvRemoved(t *testing.T) {
	dir := writeChart(t, map[string]string{"templates/x.yaml": "a: {{ env \"HOME\" }}\n"})
	mustFail(t, dir, `parse error at (demo/templates/x.yaml:1): function "env" not defined`)
}

func TestNotes(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"templates/NOTES.txt": "Installed {{ .Release.Name }} in {{ .Release.Namespace }}.",
		"templates/x.yaml":    "a: 1\n",
	})
	if got := mustRender(t, dir, "--notes", "-n", "ns"); got != "Installed rel in ns.\n" {
		t.Fatalf("notes: %q", got)
	}
	if got := mustRender(t, dir); strings.Contains(got, "Installed") || !strings.Contains(got, "a: 1") {
		t.Fatalf("manifests must not include NOTES.txt:\n%s", got)
	}
}

func TestCapabilitiesAndRelease(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"templates/x.yaml": `apps: {{ .Capabilities.APIVersions.Has "apps/v1" }}
deploy: {{ .Capabilities.APIVersions.Has "apps/v1/Deployment" }}
sm: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}
kube: {{ .Capabilities.KubeVersion.Version }} {{ .Capabilities.KubeVersion.Major }}.{{ .Capabilities.KubeVersion.Minor }} {{ .Capabilities.KubeVersion.GitVersion }}
rel: {{ .Release.Service }} {{ .Release.IsInstall }} {{ .Release.IsUpgrade }} {{ .Release.Revision }}
tmpl: {{ .Template.Name }} {{ .Template.BasePath }}
lookup: {{ len (lookup "v1" "Secret" "ns" "x") }}
`,
	})
	got := mustRender(t, dir)
	for _, w := range []string{"apps: true", "deploy: true", "sm: false", "kube: v1.29.0 1.29 v1.29.0",
		"rel: Helm true false 1", "tmpl: demo/templates/x.yaml demo/templates", "lookup: 0"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
	got = mustRender(t, dir, "--api-versions", "monitoring.coreos.com/v1", "--kube-version", "1.27.3")
	if !strings.Contains(got, "sm: true") || !strings.Contains(got, "kube: v1.27.3 1.27") {
		t.Fatal(got)
	}
}

func TestTplFilesAndYamlFunctions(t *testing.T) {
	dir := writeChart(t, map[string]string{
		".helmignore":  "secret.txt\n",
		"secret.txt":   "no",
		"files/a.conf": "x=1\ny=2\n",
		"files/b.conf": "z",
		"values.yaml":  "name: \"{{ .Release.Name }}-n\"\n",
		"templates/x.yaml": `tpl: {{ tpl .Values.name . }}
get: {{ .Files.Get "files/a.conf" | quote }}
ignored: "{{ .Files.Get "secret.txt" }}"
glob: {{ range $p, $_ := .Files.Glob "files/*.conf" }}{{ $p }} {{ end }}
lines: {{ len (.Files.Lines "files/a.conf") }}
cfg:
  {{- (.Files.Glob "files/*").AsConfig | nindent 2 }}
fy: {{ (fromYaml "a: {b: [1, 2]}").a.b | toJson }}
fyerr: {{ hasKey (fromYaml "a: [") "Error" }}
fya: {{ fromYamlArray "[x, z]" | toJson }}
fj: {{ (fromJson "{\"k\": true}").k }}
fja: {{ fromJsonArray "[1,2]" | len }}
`,
	})
	got := mustRender(t, dir)
	for _, w := range []string{"tpl: rel-n", `get: "x=1\ny=2\n"`, `ignored: ""`, "glob: files/a.conf files/b.conf",
		"lines: 2", "cfg:\n  a.conf: |\n    x=1\n    y=2\n  b.conf: z", `fy: [1,2]`, "fyerr: true",
		`fya: ["x","z"]`, "fj: true", "fja: 2"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
}

func TestShowOnlyAndYAMLErrors(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"templates/a.yaml": "kind: A\n",
		"templates/b.yaml": "kind: B\n",
	})
	got := mustRender(t, dir, "--show-only", "templates/b.yaml")
	if strings.Contains(got, "kind: A") || !strings.Contains(got, "kind: B") {
		t.Fatal(got)
	}
	mustFail(t, dir, "could not find template templates/c.yaml in chart", "-s", "templates/c.yaml")
	bad := writeChart(t, map[string]string{"templates/a.yaml": "a: [\n"})
	mustFail(t, bad, "YAML parse error on demo/templates/a.yaml")
}

func TestReleaseNameAndArgs(t *testing.T) {
	dir := writeChart(t, map[string]string{"templates/a.yaml": "kind: A\n"})
	var out, errb bytes.Buffer
	if rc := run([]string{"Bad_Name", dir}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "invalid release name") {
		t.Fatalf("rc=%d %s", rc, errb.String())
	}
	if rc := run([]string{dir}, &out, &errb); rc != 1 {
		t.Fatal("one positional argument must fail")
	}
}

func TestHelmOrder(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"templates/a.yaml": "kind: Deployment\n",
		"templates/b.yaml": "kind: ServiceAccount\n---\nkind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install\n---\nkind: Zed\n",
	})
	got := mustRender(t, dir, "--helm-order")
	var kinds []string
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "kind: ") {
			kinds = append(kinds, strings.TrimPrefix(l, "kind: "))
		}
	}
	if want := []string{"ServiceAccount", "Deployment", "Zed", "Job"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("got %v, want %v", kinds, want)
	}
}

func TestKubeVersionConstraint(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"Chart.yaml":       "apiVersion: v2\nname: demo\nversion: 0.1.0\nkubeVersion: \">=1.30.0-0\"\n",
		"templates/a.yaml": "kind: A\n",
	})
	mustFail(t, dir, "chart requires kubeVersion: >=1.30.0-0 which is incompatible with Kubernetes v1.29.0")
	mustRender(t, dir, "--kube-version", "v1.30.1")
}
