package main

import (
	"fmt"
	"sort"

	"github.com/Masterminds/semver"
)

// Capabilities is .Capabilities as `helm template` fills it without a cluster: a fixed
// Kubernetes version and the API versions the Kubernetes client library knows, plus
// --api-versions.
type Capabilities struct {
	KubeVersion KubeVersion
	APIVersions VersionSet
	HelmVersion HelmVersion
}

type KubeVersion struct {
	Version string
	Major   string
	Minor   string
}

func (kv KubeVersion) String() string { return kv.Version }

// GitVersion is the deprecated spelling Helm keeps for old charts.
func (kv KubeVersion) GitVersion() string { return kv.Version }

type HelmVersion struct {
	Version      string
	GitCommit    string
	GitTreeState string
	GoVersion    string
}

// VersionSet lists "group/version" and "group/version/Kind" strings.
type VersionSet []string

func (v VersionSet) Has(apiVersion string) bool {
	for _, x := range v {
		if x == apiVersion {
			return true
		}
	}
	return false
}

const defaultKubeVersion = "v1.29.0"

// builtinAPIs are the built-in groups of Kubernetes 1.29 (client-go v0.29's scheme, which is what
// Helm's DefaultVersionSet enumerates, plus apiextensions that Helm registers itself). Alpha
// groups are left out: charts that probe for them should be tested with --api-versions.
var builtinAPIs = map[string][]string{
	"v1": {"Binding", "ComponentStatus", "ConfigMap", "Endpoints", "Event", "LimitRange", "Namespace",
		"Node", "PersistentVolume", "PersistentVolumeClaim", "Pod", "PodTemplate",
		"ReplicationController", "ResourceQuota", "Secret", "Service", "ServiceAccount"},
	"admissionregistration.k8s.io/v1":      {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"},
	"admissionregistration.k8s.io/v1beta1": {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"},
	"apiextensions.k8s.io/v1":              {"CustomResourceDefinition"},
	"apps/v1":                              {"ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"},
	"authentication.k8s.io/v1":             {"SelfSubjectReview", "TokenRequest", "TokenReview"},
	"authorization.k8s.io/v1": {"LocalSubjectAccessReview", "SelfSubjectAccessReview",
		"SelfSubjectRulesReview", "SubjectAccessReview"},
	"autoscaling/v1":                       {"HorizontalPodAutoscaler", "Scale"},
	"autoscaling/v2":                       {"HorizontalPodAutoscaler"},
	"batch/v1":                             {"CronJob", "Job"},
	"certificates.k8s.io/v1":               {"CertificateSigningRequest"},
	"coordination.k8s.io/v1":               {"Lease"},
	"discovery.k8s.io/v1":                  {"EndpointSlice"},
	"events.k8s.io/v1":                     {"Event"},
	"flowcontrol.apiserver.k8s.io/v1":      {"FlowSchema", "PriorityLevelConfiguration"},
	"flowcontrol.apiserver.k8s.io/v1beta3": {"FlowSchema", "PriorityLevelConfiguration"},
	"networking.k8s.io/v1":                 {"Ingress", "IngressClass", "NetworkPolicy"},
	"node.k8s.io/v1":                       {"RuntimeClass"},
	"policy/v1":                            {"Eviction", "PodDisruptionBudget"},
	"rbac.authorization.k8s.io/v1":         {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"},
	"scheduling.k8s.io/v1":                 {"PriorityClass"},
	"storage.k8s.io/v1": {"CSIDriver", "CSINode", "CSIStorageCapacity", "StorageClass",
		"VolumeAttachment"},
}

func newCapabilities(kubeVersion string, extra []string) (*Capabilities, error) {
	if kubeVersion == "" {
		kubeVersion = defaultKubeVersion
	}
	sv, err := semver.NewVersion(kubeVersion)
	if err != nil {
		return nil, fmt.Errorf("invalid kube version %q: %v", kubeVersion, err)
	}
	var set VersionSet
	for gv, kinds := range builtinAPIs {
		set = append(set, gv)
		for _, k := range kinds {
			set = append(set, gv+"/"+k)
		}
	}
	sort.Strings(set)
	set = append(set, extra...)
	return &Capabilities{
		KubeVersion: KubeVersion{
			Version: "v" + sv.String(),
			Major:   fmt.Sprint(sv.Major()),
			Minor:   fmt.Sprint(sv.Minor()),
		},
		APIVersions: set,
		HelmVersion: HelmVersion{Version: "v3.14.0", GitTreeState: "clean", GoVersion: "go1.19"},
	}, nil
}

// checkKubeVersion applies Chart.yaml's kubeVersion constraint as Helm does before rendering.
func checkKubeVersion(constraint string, caps *Capabilities) error {
	if constraint == "" {
		return nil
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return fmt.Errorf("invalid kubeVersion constraint %q: %v", constraint, err)
	}
	v, _ := semver.NewVersion(caps.KubeVersion.Version)
	if !c.Check(v) {
		return fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", constraint, caps.KubeVersion.Version)
	}
	return nil
}
