{{/*
Named templates shared by every part of the chart. Only Go text/template, sprig and Helm's own
functions (include, tpl, required, fail, toYaml, lookup) are used: the chart's tests render it
with a small Helm-compatible renderer as well as with helm itself.
*/}}

{{/* The chart's name, or nameOverride. */}}
{{- define "iogate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
fullname: fullnameOverride, else the release name when it already contains the chart's name,
else <release>-<name> (as `helm create` does); truncated to 63 characters, the DNS label limit.
Object names append -node, -webhook, ... to it: see iogate.componentName for the shorter cut.
*/}}
{{- define "iogate.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
A part's object name, <fullname>-<suffix>, which must stay a DNS label (63 characters) because
Services and the webhook's DNS names are built from it: a fullname too long for the suffix fails
the rendering with the fix rather than being cut into a name that collides with another release's.
Call with (dict "root" $ "suffix" "webhook").
*/}}
{{- define "iogate.componentName" -}}
{{- $name := printf "%s-%s" (include "iogate.fullname" .root) .suffix -}}
{{- if gt (len $name) 63 -}}
{{- fail (printf "object name %q is longer than 63 characters: set fullnameOverride (or nameOverride) to something shorter" $name) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{/* name-version, the helm.sh/chart label (+ is not allowed in label values). */}}
{{- define "iogate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Selector labels: the ones a part's workload selects its pods by. They never change after
install (a Deployment's and a DaemonSet's selector is immutable), so version and chart stay out.
Call with (dict "root" $ "component" "node-agent").
*/}}
{{- define "iogate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "iogate.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
Every object's labels: the selector labels, version, managed-by, helm.sh/chart, then
commonLabels (which cannot override the standard ones: those are written last).
Call with (dict "root" $ "component" "webhook").
*/}}
{{- define "iogate.labels" -}}
{{- $standard := dict -}}
{{- $_ := set $standard "app.kubernetes.io/name" (include "iogate.name" .root) -}}
{{- $_ := set $standard "app.kubernetes.io/instance" .root.Release.Name -}}
{{- $_ := set $standard "app.kubernetes.io/component" .component -}}
{{- $_ := set $standard "app.kubernetes.io/version" (.root.Chart.AppVersion | toString) -}}
{{- $_ := set $standard "app.kubernetes.io/managed-by" .root.Release.Service -}}
{{- $_ := set $standard "helm.sh/chart" (include "iogate.chart" .root) -}}
{{- $all := merge $standard (deepCopy (.root.Values.commonLabels | default dict)) -}}
{{- toYaml $all -}}
{{- end -}}

{{/*
The image: repository:tag, tag defaulting to the chart's appVersion so an install runs the
version the chart was written for; a digest, when given, pins it further (repository:tag@digest).
*/}}
{{- define "iogate.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion | toString -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/*
The pod's pull secrets, as a list for a pod spec's imagePullSecrets (empty when there are none):
global.imagePullSecrets (set once for every subchart by an umbrella chart; a name or {name: ...})
and then imagePullSecrets (the chart's own), each name once. Every pod spec the chart renders
includes it (DaemonSet, Deployment, hook Jobs, test Pods):

      {{- with include "iogate.imagePullSecrets" . }}
      imagePullSecrets:
        {{- . | nindent 8 }}
      {{- end }}

The preflight initContainer is not among them: it runs in the training pod, which pulls with
that pod's own imagePullSecrets (and its ServiceAccount's).
*/}}
{{- define "iogate.imagePullSecrets" -}}
{{- $global := .Values.global | default dict -}}
{{- $names := list -}}
{{- range concat ($global.imagePullSecrets | default list) (.Values.imagePullSecrets | default list) -}}
{{- if kindIs "map" . -}}
{{- $names = append $names .name -}}
{{- else -}}
{{- $names = append $names . -}}
{{- end -}}
{{- end -}}
{{- $secrets := list -}}
{{- range $names | uniq -}}
{{- $secrets = append $secrets (dict "name" .) -}}
{{- end -}}
{{- with $secrets -}}
{{- toYaml . -}}
{{- end -}}
{{- end -}}

{{/* The policy ConfigMap's name, in every namespace that has a copy. */}}
{{- define "iogate.policyConfigMap" -}}
{{- include "iogate.componentName" (dict "root" . "suffix" "policy") -}}
{{- end -}}

{{/*
The policy document as policy.yaml holds it: values.policy, with metadata.name defaulting to the
fullname so that verdicts and Events say which installation's policy judged them.
*/}}
{{- define "iogate.policyDocument" -}}
{{- $policy := deepCopy .Values.policy -}}
{{- $meta := get $policy "metadata" | default dict -}}
{{- if not (get $meta "name") -}}
{{- $_ := set $meta "name" (include "iogate.fullname" .) -}}
{{- end -}}
{{- $_ := set $policy "metadata" $meta -}}
{{- toYaml $policy -}}
{{- end -}}

{{/* sha256 of the policy, as a pod annotation: a policy change rolls the pods that load it. */}}
{{- define "iogate.policyChecksum" -}}
{{- include "iogate.policyDocument" . | sha256sum -}}
{{- end -}}

{{/*
The namespaces that get a copy of the policy ConfigMap: the release's when the node agent or the
webhook is on (they mount it there), and every preflight namespace when preflight is on (a pod
can only mount a ConfigMap of its own namespace). Sorted, without duplicates, one per line.
*/}}
{{- define "iogate.policyNamespaces" -}}
{{- $ns := list -}}
{{- if or .Values.nodeAgent.enabled .Values.webhook.enabled -}}
{{- $ns = append $ns .Release.Namespace -}}
{{- end -}}
{{- if .Values.preflight.enabled -}}
{{- $ns = concat $ns (include "iogate.preflightNamespaces" . | splitList "\n") -}}
{{- end -}}
{{- $ns | compact | uniq | sortAlpha | join "\n" -}}
{{- end -}}

{{/* preflight.namespaces, or the release's namespace when the list is empty; one per line. */}}
{{- define "iogate.preflightNamespaces" -}}
{{- $ns := .Values.preflight.namespaces | default (list .Release.Namespace) -}}
{{- $ns | uniq | join "\n" -}}
{{- end -}}

{{/* The preflight ServiceAccount's name (its own, or an existing one). */}}
{{- define "iogate.preflight.serviceAccountName" -}}
{{- if .Values.preflight.serviceAccount.create -}}
{{- .Values.preflight.serviceAccount.name | default (include "iogate.componentName" (dict "root" . "suffix" "preflight")) -}}
{{- else -}}
{{- required "preflight.serviceAccount.name is required when preflight.serviceAccount.create is false" .Values.preflight.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The preflight accounts' names, one per line: the preflight ServiceAccount and each of
preflight.rbac.extraServiceAccounts. preflight-rbac.yaml binds these in every preflight
namespace, and the least-reach policy matches the same (iogate.preflight.usernames).
*/}}
{{- define "iogate.preflight.accountNames" -}}
{{- $sa := include "iogate.preflight.serviceAccountName" . -}}
{{- prepend (.Values.preflight.rbac.extraServiceAccounts | default list) $sa | uniq | join "\n" -}}
{{- end -}}

{{/*
The usernames of the preflight accounts, one per line: system:serviceaccount:NS:NAME for each of
iogate.preflight.accountNames in every preflight namespace, exactly the subjects
preflight-rbac.yaml binds: the least-reach policy (preflight-least-reach-policy.yaml) matches them.
*/}}
{{- define "iogate.preflight.usernames" -}}
{{- $names := include "iogate.preflight.accountNames" . | splitList "\n" | compact -}}
{{- $users := list -}}
{{- range $ns := include "iogate.preflightNamespaces" . | splitList "\n" | compact -}}
{{- range $name := $names -}}
{{- $users = append $users (printf "system:serviceaccount:%s:%s" $ns $name) -}}
{{- end -}}
{{- end -}}
{{- $users | join "\n" -}}
{{- end -}}

{{/*
The restricted container securityContext every iogate container gets (the Pod Security
Standards' "restricted" level, minus the pod-level parts). The node agent adds runAsUser 0.
*/}}
{{/*
A resource list as `iogate webhook --preflight-requests` reads it (kubectl's old --requests form):
"cpu=1,memory=256Mi", names in order.
*/}}
{{- define "iogate.resourceList" -}}
{{- $parts := list -}}
{{- range $name, $quantity := . -}}
{{- $parts = append $parts (printf "%s=%v" $name $quantity) -}}
{{- end -}}
{{- join "," $parts -}}
{{- end -}}

{{- define "iogate.containerSecurityContext" -}}
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop: [ALL]
{{- end -}}

{{/*
The preflight initContainer, exactly as `iogate webhook` injects it (agent/webhook/
preflight_injection.cc) plus the resources from preflight.resources, as a list item for a pod's
initContainers. Put it first: nothing should run before the dataset is judged.

  initContainers:
    {{- include "iogate.preflight.initContainer" (dict "root" $ "volume" "dataset" "path" "/data") | nindent 4 }}
  volumes:
    {{- include "iogate.preflight.volumes" (dict "root" $) | nindent 4 }}

Keys: root (the chart's top-level context, $), volume (the pod's volume holding the dataset),
path (where the training container mounts it: preflight probes that path, and path rules and
the pod's annotations speak of it; default /data); optional readOnly (default true, as the
webhook: preflight then reads the files already there and writes nothing into the dataset;
false lets it write and remove its test file, which measures an empty volume too) and subPath.
The pod must run as a ServiceAccount bound to the preflight Role (see NOTES.txt) and have the
policy volume (iogate.preflight.volumes).
*/}}
{{- define "iogate.preflight.initContainer" -}}
{{- $root := required "iogate.preflight.initContainer: pass (dict \"root\" $ \"volume\" NAME \"path\" PATH)" .root -}}
{{- $volume := required "iogate.preflight.initContainer: \"volume\" (the dataset volume's name) is required" .volume -}}
{{- $path := .path | default "/data" -}}
{{- if not (hasPrefix "/" $path) -}}
{{- fail (printf "iogate.preflight.initContainer: path %q must be absolute" $path) -}}
{{- end -}}
{{- if or (eq $path "/etc/iogate") (eq $path "/etc/iogate/") -}}
{{- fail (printf "iogate.preflight.initContainer: volume %q is mounted at /etc/iogate, where the preflight's policy goes" $volume) -}}
{{- end -}}
{{- $readOnly := true -}}
{{- if hasKey . "readOnly" -}}
{{- $readOnly = .readOnly -}}
{{- end -}}
- name: iogate-preflight
  image: {{ include "iogate.image" $root }}
  args: [preflight, {{ $path | quote }}, --policy, /etc/iogate/policy.yaml]
  env:
    - name: POD_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    - name: POD_NAMESPACE
      valueFrom:
        fieldRef:
          fieldPath: metadata.namespace
    - name: NODE_NAME
      valueFrom:
        fieldRef:
          fieldPath: spec.nodeName
    - name: CONTAINER_NAME
      value: iogate-preflight
  volumeMounts:
    - name: {{ $volume }}
      readOnly: {{ $readOnly }}
      {{- with .subPath }}
      subPath: {{ . | quote }}
      {{- end }}
      mountPath: {{ $path | quote }}
    - name: iogate-policy
      mountPath: /etc/iogate
      readOnly: true
  securityContext:
    {{- include "iogate.containerSecurityContext" $root | nindent 4 }}
  resources:
    {{- toYaml $root.Values.preflight.resources | nindent 4 }}
{{- end -}}

{{/*
The policy volume the preflight initContainer mounts, as a list item for a pod's volumes: the
ConfigMap <fullname>-policy (a copy lives in every preflight namespace), key policy.yaml, exactly
as the webhook adds it. Call with (dict "root" $).
*/}}
{{- define "iogate.preflight.volumes" -}}
{{- $root := required "iogate.preflight.volumes: pass (dict \"root\" $)" .root -}}
- name: iogate-policy
  configMap:
    name: {{ include "iogate.policyConfigMap" $root }}
    items:
      - key: policy.yaml
        path: policy.yaml
{{- end -}}

{{/*
Whether the webhook's certificate comes from cert-manager: webhook.certManager.enabled true, or
"auto" when the cluster serves cert-manager.io/v1 (helm template without a cluster, or with
--api-versions cert-manager.io/v1, decides the same way). "true" or empty.
*/}}
{{- define "iogate.webhook.certManager" -}}
{{- $cm := .Values.webhook.certManager.enabled -}}
{{- if eq (toString $cm) "auto" -}}
{{- if .Capabilities.APIVersions.Has "cert-manager.io/v1" -}}true{{- end -}}
{{- else if eq (toString $cm) "true" -}}
true
{{- end -}}
{{- end -}}

{{/* The DNS names the API server may use for the webhook's Service, one per line. */}}
{{- define "iogate.webhook.dnsNames" -}}
{{- $svc := include "iogate.componentName" (dict "root" . "suffix" "webhook") -}}
{{- $ns := .Release.Namespace -}}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.%s" $svc $ns .Values.webhook.clusterDomain) | join "\n" -}}
{{- end -}}

{{/*
--request-deadline in seconds (a float), from webhook.requestDeadline (the binary's duration
syntax: a number and ms, s, m or h; a bare number is seconds).
*/}}
{{- define "iogate.webhook.requestDeadlineSeconds" -}}
{{- $d := .Values.webhook.requestDeadline | toString -}}
{{- $n := regexFind "^[0-9]+(\\.[0-9]+)?" $d | float64 -}}
{{- $unit := trimPrefix (regexFind "^[0-9]+(\\.[0-9]+)?" $d) $d -}}
{{- if eq $unit "ms" -}}{{- divf $n 1000 -}}
{{- else if eq $unit "us" -}}{{- divf $n 1000000 -}}
{{- else if or (eq $unit "m") (eq $unit "min") -}}{{- mulf $n 60 -}}
{{- else if eq $unit "h" -}}{{- mulf $n 3600 -}}
{{- else -}}{{- $n -}}
{{- end -}}
{{- end -}}

{{/* The policy's mode as the binary reads it: a policy that names none is warn. */}}
{{- define "iogate.policyMode" -}}
{{- .Values.policy.mode | default "warn" -}}
{{- end -}}

{{/*
/validate's failurePolicy: webhook.validate.failurePolicy where set; else Fail in enforce mode,
where /validate refuses pods, and Ignore in the others, where it never does: an outage of a
webhook that blocks nothing must not block either.
*/}}
{{- define "iogate.webhook.validateFailurePolicy" -}}
{{- .Values.webhook.validate.failurePolicy | default (eq (include "iogate.policyMode" .) "enforce" | ternary "Fail" "Ignore") -}}
{{- end -}}
