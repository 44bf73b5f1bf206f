package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// good passes every check; each bad case below breaks one rule with one textual edit.
const good = `# Source: iogate/templates/x.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: iogate-webhook
  namespace: iogate-system
  labels: &labels
    app.kubernetes.io/name: iogate
    app.kubernetes.io/instance: iogate
    app.kubernetes.io/version: 0.1.0
    app.kubernetes.io/component: webhook
    app.kubernetes.io/managed-by: Helm
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: iogate-webhook
  labels: *labels
rules:
  - apiGroups: [""]
    resources: [nodes]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: iogate-webhook
  labels: *labels
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: iogate-webhook}
subjects:
  - {kind: ServiceAccount, name: iogate-webhook, namespace: iogate-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: iogate-preflight
  namespace: iogate-system
  labels: *labels
rules:
  - apiGroups: [""]
    resources: [pods, persistentvolumeclaims]
    verbs: [get, patch]
  - apiGroups: ["", events.k8s.io]
    resources: [events]
    verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: iogate-preflight
  namespace: iogate-system
  labels: *labels
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: iogate-preflight}
subjects:
  - {kind: ServiceAccount, name: iogate-webhook}
---
apiVersion: v1
kind: Service
metadata:
  name: iogate-webhook
  namespace: iogate-system
  labels: *labels
spec:
  ports:
    - {name: https, port: 443, targetPort: https}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: iogate-webhook
  namespace: iogate-system
  labels: *labels
spec:
  template:
    spec:
      initContainers:
        - name: init
          image: iogate:0.1.0
          securityContext:
            readOnlyRootFilesystem: true
            allowPrivilegeEscalation: false
            capabilities: {drop: [ALL]}
          resources: {requests: {cpu: 10m}, limits: {memory: 64Mi}}
      containers:
        - name: webhook
          image: registry.example/iogate:0.1.0
          securityContext:
            readOnlyRootFilesystem: true
            allowPrivilegeEscalation: false
            capabilities: {drop: [ALL]}
          resources: {requests: {cpu: 10m, memory: 32Mi}, limits: {memory: 64Mi}}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: iogate-cron
  namespace: iogate-system
  labels: *labels
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
            - name: cron
              image: iogate@sha256:0123
              securityContext:
                readOnlyRootFilesystem: true
                allowPrivilegeEscalation: false
                capabilities: {drop: [ALL]}
              resources: {requests: {cpu: 1m}, limits: {cpu: 1m}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: iogate-webhook
  labels: *labels
webhooks:
  - name: mutate.iogate.io
    clientConfig:
      service: {name: iogate-webhook, namespace: iogate-system, path: /mutate, port: 443}
    sideEffects: None
    admissionReviewVersions: [v1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: iogate-webhook
  labels: *labels
webhooks:
  - name: validate.iogate.io
    clientConfig:
      service: {name: iogate-webhook, namespace: iogate-system, path: /validate}
    sideEffects: None
    admissionReviewVersions: [v1, v1beta1]
`

const expectRBAC = `webhook:
  - {apiGroups: [""], resources: [nodes], verbs: [list, get]}
  - {apiGroups: [""], resources: [nodes], verbs: [watch]}
preflight:
  - {apiGroups: [""], resources: [pods], verbs: [get, patch]}
  - {apiGroups: [""], resources: [persistentvolumeclaims], verbs: [patch, get]}
  - {apiGroups: [events.k8s.io, ""], resources: [events], verbs: [create]}
`

func runCheck(t *testing.T, manifest string, extra ...string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "m.yaml")
	rbac := filepath.Join(dir, "rbac.yaml")
	os.WriteFile(f, []byte(manifest), 0o644)
	os.WriteFile(rbac, []byte(expectRBAC), 0o644)
	args := append([]string{"--app-version", "0.1.0", "--expect-rbac", rbac, "--require-labels"}, extra...)
	var out, errb bytes.Buffer
	rc := run(append(args, f), nil, &out, &errb)
	return out.String(), rc
}

func TestGoodPasses(t *testing.T) {
	out, rc := runCheck(t, good)
	if rc != 0 || out != "" {
		t.Fatalf("rc=%d\n%s", rc, out)
	}
}

// edit replaces old (which must occur) by new, so a typo in a test cannot make it vacuous.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(good, old) {
		t.Fatalf("fixture lacks %q", old)
	}
	return strings.Replace(good, old, new, 1)
}

func TestEachRuleFails(t *testing.T) {
	cases := []struct {
		name, old, new, want string
	}{
		{"duplicate", "name: iogate-cron", "name: iogate-webhook",
			""}, // different kinds: not a duplicate (guards the check below against false positives)
		{"writable root", "readOnlyRootFilesystem: true\n            allowPrivilegeEscalation: false\n            capabilities: {drop: [ALL]}\n          resources: {requests: {cpu: 10m, memory",
			"readOnlyRootFilesystem: false\n            allowPrivilegeEscalation: false\n            capabilities: {drop: [ALL]}\n          resources: {requests: {cpu: 10m, memory",
			`Deployment/iogate-system/iogate-webhook: container "webhook": securityContext.readOnlyRootFilesystem is not true`},
		{"escalation", "allowPrivilegeEscalation: false\n            capabilities: {drop: [ALL]}\n          resources: {requests: {cpu: 10m}",
			"capabilities: {drop: [ALL]}\n          resources: {requests: {cpu: 10m}",
			`Deployment/iogate-system/iogate-webhook: initContainer "init": securityContext.allowPrivilegeEscalation is not false`},
		{"caps", "capabilities: {drop: [ALL]}\n              resources", "capabilities: {drop: [NET_RAW]}\n              resources",
			`CronJob/iogate-system/iogate-cron: container "cron": securityContext.capabilities.drop does not contain ALL`},
		{"no securityContext", "          securityContext:\n            readOnlyRootFilesystem: true\n            allowPrivilegeEscalation: false\n            capabilities: {drop: [ALL]}\n          resources: {requests: {cpu: 10m}",
			"          resources: {requests: {cpu: 10m}",
			`initContainer "init": has no securityContext`},
		{"no limits", "resources: {requests: {cpu: 1m}, limits: {cpu: 1m}}", "resources: {requests: {cpu: 1m}}",
			`CronJob/iogate-system/iogate-cron: container "cron": has no resources.limits`},
		{"no requests", "resources: {requests: {cpu: 1m}, limits: {cpu: 1m}}", "resources: {requests: {}, limits: {cpu: 1m}}",
			`container "cron": has no resources.requests`},
		{"image tag", "image: registry.example/iogate:0.1.0", "image: registry.example/iogate:latest",
			`container "webhook": image "registry.example/iogate:latest" is not pinned to :0.1.0`},
		{"webhook service name", "service: {name: iogate-webhook, namespace: iogate-system, path: /mutate", "service: {name: other, namespace: iogate-system, path: /mutate",
			`MutatingWebhookConfiguration/-/iogate-webhook: webhook "mutate.iogate.io": clientConfig.service iogate-system/other is not in the input`},
		{"webhook service namespace", "namespace: iogate-system, path: /validate", "namespace: default, path: /validate",
			`webhook "validate.iogate.io": clientConfig.service default/iogate-webhook is not in the input`},
		{"webhook port", "path: /mutate, port: 443", "path: /mutate, port: 8443",
			`webhook "mutate.iogate.io": Service iogate-system/iogate-webhook has no port 8443`},
		{"webhook default port", "{name: https, port: 443, targetPort: https}", "{name: https, port: 8443, targetPort: https}",
			`webhook "validate.iogate.io": Service iogate-system/iogate-webhook has no port 443`},
		{"mutate path", "path: /mutate", "path: /validate",
			`webhook "mutate.iogate.io": clientConfig.service.path is "/validate", want "/mutate"`},
		{"validate path", "path: /validate}", "}",
			`webhook "validate.iogate.io": clientConfig.service.path is "", want "/validate"`},
		{"url webhook", "      service: {name: iogate-webhook, namespace: iogate-system, path: /mutate, port: 443}", "      url: https://example/mutate",
			`webhook "mutate.iogate.io": clientConfig has no service`},
		{"extra verb", "verbs: [get, list, watch]", "verbs: [get, list, watch, delete]",
			`ClusterRole/-/iogate-webhook: grants "" nodes delete, not expected for webhook`},
		{"missing verb", "verbs: [get, list, watch]", "verbs: [get, list]",
			`ClusterRole/-/iogate-webhook: lacks "" nodes watch, expected for webhook`},
		{"extra group", "  - apiGroups: [\"\", events.k8s.io]", "  - apiGroups: [\"\", events.k8s.io, apps]",
			`Role/iogate-system/iogate-preflight: grants apps events create, not expected for preflight`},
		{"wildcard", "resources: [pods, persistentvolumeclaims]", "resources: [\"*\"]",
			`Role/iogate-system/iogate-preflight: grants "" * get, not expected for preflight`},
		{"unexpected role", "kind: ClusterRole\nmetadata:\n  name: iogate-webhook", "kind: ClusterRole\nmetadata:\n  name: iogate-admin",
			"ClusterRole/-/iogate-admin: is not in the expected RBAC"},
		{"binding to missing role", "kind: ClusterRole, name: iogate-webhook}", "kind: ClusterRole, name: cluster-admin}",
			"ClusterRoleBinding/-/iogate-webhook: roleRef ClusterRole cluster-admin is not in the input"},
		{"binding to missing SA", "{kind: ServiceAccount, name: iogate-webhook, namespace: iogate-system}", "{kind: ServiceAccount, name: default, namespace: iogate-system}",
			"ClusterRoleBinding/-/iogate-webhook: subject ServiceAccount iogate-system/default is not in the input"},
		{"rolebinding SA elsewhere", "{kind: ServiceAccount, name: iogate-webhook}", "{kind: ServiceAccount, name: iogate-webhook, namespace: other}",
			"RoleBinding/iogate-system/iogate-preflight: subject ServiceAccount other/iogate-webhook is not in the input"},
		{"binding to a group", "{kind: ServiceAccount, name: iogate-webhook}", "{kind: Group, name: system:authenticated}",
			"RoleBinding/iogate-system/iogate-preflight: subject Group system:authenticated is not a ServiceAccount"},
		{"binding without subjects", "subjects:\n  - {kind: ServiceAccount, name: iogate-webhook}\n", "",
			"RoleBinding/iogate-system/iogate-preflight: has no subjects"},
		{"label", "    app.kubernetes.io/component: webhook\n", "",
			"ServiceAccount/iogate-system/iogate-webhook: missing label app.kubernetes.io/component"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, rc := runCheck(t, edit(t, c.old, c.new))
			if c.want == "" {
				if rc != 0 {
					t.Fatalf("want a pass, got rc=%d\n%s", rc, out)
				}
				return
			}
			if rc != 1 || !strings.Contains(out, c.want+"\n") {
				t.Fatalf("rc=%d, want a line %q in\n%s", rc, c.want, out)
			}
		})
	}
}

func TestDuplicateObject(t *testing.T) {
	m := good + "---\napiVersion: v1\nkind: Service\nmetadata: {name: iogate-webhook, namespace: iogate-system, labels: {app.kubernetes.io/name: a, app.kubernetes.io/instance: a, app.kubernetes.io/version: a, app.kubernetes.io/component: a, app.kubernetes.io/managed-by: a}}\nspec: {ports: [{port: 443}]}\n"
	out, rc := runCheck(t, m)
	if rc != 1 || !strings.Contains(out, "Service/iogate-system/iogate-webhook: appears more than once") {
		t.Fatalf("rc=%d\n%s", rc, out)
	}
}

// A chart leaves metadata.namespace to helm install -n; --namespace supplies it so that webhook
// and binding references resolve.
func TestDefaultNamespace(t *testing.T) {
	m := strings.ReplaceAll(good, "  namespace: iogate-system\n", "")
	if out, rc := runCheck(t, m); rc != 1 || !strings.Contains(out, "clientConfig.service iogate-system/iogate-webhook is not in the input") {
		t.Fatalf("without --namespace: rc=%d\n%s", rc, out)
	}
	if out, rc := runCheck(t, m, "--namespace", "iogate-system"); rc != 0 {
		t.Fatalf("with --namespace: rc=%d\n%s", rc, out)
	}
}

func TestOptionalChecksAreOptional(t *testing.T) {
	m := edit(t, "image: registry.example/iogate:0.1.0", "image: registry.example/iogate:latest")
	m = strings.ReplaceAll(m, "app.kubernetes.io/version: 0.1.0", "x: y")
	dir := t.TempDir()
	f := filepath.Join(dir, "m.yaml")
	os.WriteFile(f, []byte(m), 0o644)
	var out, errb bytes.Buffer
	if rc := run([]string{f}, nil, &out, &errb); rc != 0 {
		t.Fatalf("without --app-version/--expect-rbac/--require-labels: rc=%d\n%s", rc, out.String())
	}
}

func TestSummary(t *testing.T) {
	var out, errb bytes.Buffer
	rc := run([]string{"--summary", "-"}, strings.NewReader(good), &out, &errb)
	want := `ClusterRole -/iogate-webhook
ClusterRoleBinding -/iogate-webhook
CronJob iogate-system/iogate-cron
Deployment iogate-system/iogate-webhook
MutatingWebhookConfiguration -/iogate-webhook
Role iogate-system/iogate-preflight
RoleBinding iogate-system/iogate-preflight
Service iogate-system/iogate-webhook
ServiceAccount iogate-system/iogate-webhook
ValidatingWebhookConfiguration -/iogate-webhook
`
	if rc != 0 || out.String() != want {
		t.Fatalf("rc=%d\n%s", rc, out.String())
	}
}

func TestUnparseableInput(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"-"}, strings.NewReader("a: [\n"), &out, &errb); rc != 1 {
		t.Fatalf("rc=%d", rc)
	}
	if rc := run([]string{"-"}, strings.NewReader("- a\n"), &out, &errb); rc != 1 || !strings.Contains(out.String(), "document 1: is not a mapping") {
		t.Fatalf("rc=%d %s", rc, out.String())
	}
}
