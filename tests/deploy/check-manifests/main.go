// check-manifests checks rendered Kubernetes manifests (`helm template` or `kubectl kustomize`
// output) against iogate's own deployment rules, the ones that real validation (helm lint, the
// apiserver's schema and admission) does not make, and prints every problem as
// "<Kind>/<namespace>/<name>: <problem>".
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

const usageText = `usage: check-manifests [flags] FILE.yaml...   (FILE "-" reads stdin)

Checks multi-document YAML and prints each problem as "<Kind>/<namespace>/<name>: <problem>";
exits 1 when there is any. Cluster-scoped objects print namespace "-".

Always checked (iogate's rules; well-formedness is left to helm and the apiserver):
  - no object appears twice (helm and kubectl apply keep the last copy without a word)
  - every container and initContainer of a Pod/Deployment/DaemonSet/StatefulSet/ReplicaSet/
    Job/CronJob: securityContext.readOnlyRootFilesystem true, allowPrivilegeEscalation false,
    capabilities.drop containing ALL, resources.requests and resources.limits
  - webhook configurations: each webhook's clientConfig.service is a Service of the input
    (same namespace) with that port (default 443), path /mutate (Mutating) or /validate
    (Validating)
  - every RoleBinding/ClusterRoleBinding has subjects, references a Role/ClusterRole of the
    input and binds only ServiceAccounts of the input

flags:
  --namespace NS       namespace of namespaced objects that have none (a chart leaves it to
                       'helm install -n'); without it they print as "-"
  --app-version V      every image must end in :V (or carry an @sha256: digest)
  --expect-rbac FILE   YAML map of role name (or '-'-separated name suffix) to its rules
                       ({apiGroups, resources, verbs}); every Role/ClusterRole must be listed
                       and grant exactly those permissions
  --require-labels     every object carries app.kubernetes.io/{name,instance,version,
                       component,managed-by}
  --summary            print "Kind namespace/name" per object, sorted, and check nothing
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cfg config
	var files []string
	namespace, doSummary := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := a, "", false
		if eq := strings.Index(a, "="); strings.HasPrefix(a, "--") && eq > 0 {
			name, val, hasVal = a[:eq], a[eq+1:], true
		}
		next := func() string {
			if hasVal {
				return val
			}
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "check-manifests: %s needs an argument\n", name)
				os.Exit(2)
			}
			i++
			return args[i]
		}
		switch name {
		case "-h", "--help":
			fmt.Fprint(stdout, usageText)
			return 0
		case "--namespace", "-n":
			namespace = next()
		case "--app-version":
			cfg.appVersion = next()
		case "--expect-rbac":
			exp, err := loadExpectRBAC(next())
			if err != nil {
				fmt.Fprintf(stderr, "check-manifests: %v\n", err)
				return 2
			}
			cfg.expectRBAC = exp
		case "--require-labels":
			cfg.requireLabels = true
		case "--summary":
			doSummary = true
		default:
			if strings.HasPrefix(a, "-") && a != "-" {
				fmt.Fprintf(stderr, "check-manifests: unknown flag %s\n%s", a, usageText)
				return 2
			}
			files = append(files, a)
		}
	}
	if len(files) == 0 {
		fmt.Fprint(stderr, usageText)
		return 2
	}
	var objs []*object
	var probs []problem
	for _, f := range files {
		var data []byte
		var err error
		if f == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "check-manifests: %v\n", err)
			return 2
		}
		o, p, err := parseObjects(data, namespace)
		if err != nil {
			fmt.Fprintf(stderr, "check-manifests: %s: %v\n", f, err)
			return 1
		}
		objs, probs = append(objs, o...), append(probs, p...)
	}
	if doSummary {
		for _, l := range summary(objs) {
			fmt.Fprintln(stdout, l)
		}
		return 0
	}
	probs = append(probs, check(objs, cfg)...)
	for _, p := range probs {
		fmt.Fprintln(stdout, p)
	}
	if len(probs) > 0 {
		fmt.Fprintf(stderr, "check-manifests: %d problem(s) in %d object(s)\n", len(probs), len(objs))
		return 1
	}
	fmt.Fprintf(stderr, "check-manifests: %d object(s), no problems\n", len(objs))
	return 0
}
