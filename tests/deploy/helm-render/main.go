// helm-render renders a Helm chart the way `helm template` does, for testing charts on machines
// without a helm binary. See usage() for the flags and README-like notes in the file comments of
// values.go (value merging), render.go (engine), funcs.go (functions), schema.go (validation).
package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

const usageText = `usage: helm-render [flags] RELEASE CHART_DIR

Renders CHART_DIR like 'helm template RELEASE CHART_DIR' and prints the manifests.

flags:
  -n, --namespace NS        release namespace (default "default")
  -f, --values FILE         values file, merged over the chart's values.yaml (repeatable)
      --set a.b=c           set values, typed like helm (repeatable; a={x,y}, a[0].b=c, a=null)
      --set-string a=b      set values as strings (repeatable)
      --set-file a=PATH     set a value to a file's contents (repeatable)
  -a, --api-versions G/V    add to .Capabilities.APIVersions (repeatable)
      --kube-version V      .Capabilities.KubeVersion (default v1.29.0)
  -s, --show-only T         only print templates/T (repeatable)
      --notes               print the rendered NOTES.txt instead of the manifests
      --print-values        print the merged values as YAML and exit
      --helm-order          order documents by kind like helm's install order
                            (default: by template file name, documents in file order)
`

type options struct {
	namespace   string
	valueFiles  []string
	sets        []string
	setStrings  []string
	setFiles    []string
	apiVersions []string
	kubeVersion string
	showOnly    []string
	notes       bool
	printValues bool
	helmOrder   bool
	release     string
	chartDir    string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	opts, err := parseArgs(args)
	if err == errHelp {
		fmt.Fprint(stdout, usageText)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n%s", err, usageText)
		return 1
	}
	out, err := renderChart(opts, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, out)
	return 0
}

var errHelp = fmt.Errorf("help")

// parseArgs accepts flags before, between and after the two positional arguments, as helm's
// cobra parser does, in both "--flag value" and "--flag=value" forms.
func parseArgs(args []string) (*options, error) {
	o := &options{namespace: "default"}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := a, "", false
		if strings.HasPrefix(a, "-") && strings.Contains(a, "=") {
			name, val, hasVal = a[:strings.Index(a, "=")], a[strings.Index(a, "=")+1:], true
		}
		next := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag needs an argument: %s", name)
			}
			i++
			return args[i], nil
		}
		var err error
		var v string
		switch name {
		case "-h", "--help":
			return nil, errHelp
		case "-n", "--namespace":
			o.namespace, err = next()
		case "-f", "--values":
			v, err = next()
			o.valueFiles = append(o.valueFiles, v)
		case "--set":
			v, err = next()
			o.sets = append(o.sets, v)
		case "--set-string":
			v, err = next()
			o.setStrings = append(o.setStrings, v)
		case "--set-file":
			v, err = next()
			o.setFiles = append(o.setFiles, v)
		case "-a", "--api-versions":
			v, err = next()
			o.apiVersions = append(o.apiVersions, strings.Split(v, ",")...)
		case "--kube-version":
			o.kubeVersion, err = next()
		case "-s", "--show-only":
			v, err = next()
			o.showOnly = append(o.showOnly, v)
		case "--notes":
			o.notes = true
		case "--print-values":
			o.printValues = true
		case "--helm-order":
			o.helmOrder = true
		default:
			if strings.HasPrefix(a, "-") && a != "-" {
				return nil, fmt.Errorf("unknown flag: %s", a)
			}
			positional = append(positional, a)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(positional) != 2 {
		return nil, fmt.Errorf("expected RELEASE and CHART_DIR, got %d arguments", len(positional))
	}
	o.release, o.chartDir = positional[0], positional[1]
	return o, nil
}

// Helm's release name rule (DNS-1123 subdomain, at most 53 characters so that suffixed object
// names still fit in 63).
var releaseNameRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

func renderChart(o *options, stderr io.Writer) (string, error) {
	if !releaseNameRe.MatchString(o.release) || len(o.release) > 53 {
		return "", fmt.Errorf("release name %q: invalid release name, must match regex %s and the length must not be longer than 53", o.release, releaseNameRe)
	}
	c, err := loadChart(o.chartDir)
	if err != nil {
		return "", err
	}
	if c.Meta.Type == "library" {
		return "", fmt.Errorf("library charts are not installable")
	}
	caps, err := newCapabilities(o.kubeVersion, o.apiVersions)
	if err != nil {
		return "", err
	}
	if err := checkKubeVersion(c.Meta.KubeVersion, caps); err != nil {
		return "", err
	}
	values, err := mergeValues(c, o, func(w string) { fmt.Fprintln(stderr, w) })
	if err != nil {
		return "", err
	}
	if o.printValues {
		return toYAML(values) + "\n", nil
	}
	if c.Schema != nil {
		errs, err := validateValues(c.Schema, values)
		if err != nil {
			return "", err
		}
		if len(errs) > 0 {
			return "", schemaFailure(c.Meta.Name, errs)
		}
	}
	top := map[string]interface{}{
		"Values": values,
		"Release": map[string]interface{}{
			"Name":      o.release,
			"Namespace": o.namespace,
			"Service":   "Helm",
			"IsInstall": true,
			"IsUpgrade": false,
			"Revision":  1,
		},
		"Chart":        c.Meta,
		"Capabilities": caps,
		"Files":        c.Files,
		"Subcharts":    map[string]interface{}{},
	}
	rendered, err := renderTemplates(c, top)
	if err != nil {
		return "", err
	}
	notesName := c.Meta.Name + "/templates/NOTES.txt"
	if o.notes {
		notes, ok := rendered[notesName]
		if !ok {
			return "", fmt.Errorf("chart has no templates/NOTES.txt")
		}
		if notes != "" && !strings.HasSuffix(notes, "\n") {
			notes += "\n"
		}
		return notes, nil
	}
	ms, err := splitManifests(rendered, "/NOTES.txt")
	if err != nil {
		return "", err
	}
	if ms, err = filterShowOnly(ms, c.Meta.Name, o.showOnly); err != nil {
		return "", err
	}
	return formatManifests(orderManifests(ms, o.helmOrder)), nil
}

// mergeValues builds .Values as helm does: -f files merged in order, then every --set, then every
// --set-string, then every --set-file (helm applies them by kind, not interleaved), and the
// result coalesced over the chart's values.yaml.
func mergeValues(c *Chart, o *options, warn func(string)) (map[string]interface{}, error) {
	user := map[string]interface{}{}
	for _, f := range o.valueFiles {
		m, err := readValuesFile(f)
		if err != nil {
			return nil, err
		}
		user = mergeMaps(user, m)
	}
	for _, s := range o.sets {
		if err := parseSet(s, user, false); err != nil {
			return nil, err
		}
	}
	for _, s := range o.setStrings {
		if err := parseSet(s, user, true); err != nil {
			return nil, err
		}
	}
	for _, s := range o.setFiles {
		eq := strings.Index(s, "=")
		if eq < 0 {
			return nil, fmt.Errorf("--set-file %q: expected key=path", s)
		}
		data, err := os.ReadFile(s[eq+1:])
		if err != nil {
			return nil, err
		}
		// Escape the contents so the set parser takes them literally.
		lit := strings.NewReplacer(`\`, `\\`, `,`, `\,`, `{`, `\{`).Replace(string(data))
		if err := parseSet(s[:eq]+"="+lit, user, true); err != nil {
			return nil, err
		}
	}
	return coalesce(user, deepCopy(c.Values).(map[string]interface{}), warn), nil
}
