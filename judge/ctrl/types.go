package ctrl

import "time"

// Kind names an object type, as in a manifest's "kind:" field.
type Kind string

// The kinds are the types marked //ctrl:kind below: their constants, list
// types, wire codec and deep copy are generated from these declarations
// (internal/kindgen; see the package doc). wire=N is the kind's byte on
// the wire, fixed for good once a kind exists.

// TypeMeta is the kind and apiVersion of a manifest.
//
//ctrl:nowire (the kind is the wire's kind byte, the version follows from it)
type TypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

// ObjectMeta is the metadata every object carries.
type ObjectMeta struct {
	Name         string `json:"name,omitempty"`
	GenerateName string `json:"generateName,omitempty"`
	Namespace    string `json:"namespace,omitempty"`
	// UID is set by the API server and never reused: an object deleted and
	// created again under the same name gets a new one.
	UID string `json:"uid,omitempty"`
	// ResourceVersion changes on every write. An Update carrying an older
	// one fails with a Conflict error.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Generation counts changes to the spec (not to status or metadata).
	Generation        int64             `json:"generation,omitempty"`
	CreationTimestamp time.Time         `json:"creationTimestamp,omitempty"`
	DeletionTimestamp *time.Time        `json:"deletionTimestamp,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	OwnerReferences   []OwnerReference  `json:"ownerReferences,omitempty"`
	Finalizers        []string          `json:"finalizers,omitempty"`
}

// OwnerReference points from a dependent to its owner. When the owner is
// deleted, the garbage collector deletes the dependents.
type OwnerReference struct {
	APIVersion         string `json:"apiVersion,omitempty"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         bool   `json:"controller,omitempty"`
	BlockOwnerDeletion bool   `json:"blockOwnerDeletion,omitempty"`
}

func (m *ObjectMeta) GetName() string                      { return m.Name }
func (m *ObjectMeta) GetNamespace() string                 { return m.Namespace }
func (m *ObjectMeta) GetUID() string                       { return m.UID }
func (m *ObjectMeta) GetResourceVersion() string           { return m.ResourceVersion }
func (m *ObjectMeta) GetLabels() map[string]string         { return m.Labels }
func (m *ObjectMeta) GetOwnerReferences() []OwnerReference { return m.OwnerReferences }

// GetObjectMeta gives access to the metadata of any object.
func (m *ObjectMeta) GetObjectMeta() *ObjectMeta { return m }

// Object is any object the Client can read or write: a pointer to one of
// the kinds, such as *Deployment or *Pod.
type Object interface {
	GetObjectMeta() *ObjectMeta
	GetObjectKind() Kind
	reset()
}

// ObjectList is a list the Client can fill: a pointer to a kind's list,
// such as *DeploymentList or *PodList.
type ObjectList interface {
	itemKind() Kind
}

// Deployment asks for Replicas copies of a Pod template and rolls them over
// to a new template at a pace set by the strategy.
//
//ctrl:kind wire=1 apiVersion=apps/v1
type Deployment struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       DeploymentSpec   `json:"spec"`
	Status     DeploymentStatus `json:"status,omitempty"`
}

type DeploymentSpec struct {
	Replicas int32              `json:"replicas"`
	Selector LabelSelector      `json:"selector"`
	Template PodTemplateSpec    `json:"template"`
	Strategy DeploymentStrategy `json:"strategy,omitempty"`
	// ProgressDeadlineSeconds is how long a rollout may go without
	// progress before the Deployment's Progressing condition says
	// ProgressDeadlineExceeded. 0 (or absent) means no deadline: unlike
	// Kubernetes, which defaults it to 600, nothing fills it in.
	ProgressDeadlineSeconds int32 `json:"progressDeadlineSeconds,omitempty"`
}

// LabelSelector selects objects whose labels include every MatchLabels pair.
type LabelSelector struct {
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// PodTemplateSpec is what each Pod of a Deployment looks like.
type PodTemplateSpec struct {
	ObjectMeta `json:"metadata"`
	Spec       PodSpec `json:"spec"`
}

type DeploymentStrategy struct {
	Type          string                  `json:"type,omitempty"`
	RollingUpdate RollingUpdateDeployment `json:"rollingUpdate,omitempty"`
}

// RollingUpdateDeployment bounds a rollout. Unlike Kubernetes, both are
// plain Pod counts, never percentages.
type RollingUpdateDeployment struct {
	// MaxSurge is how many Pods above Spec.Replicas may exist at once.
	MaxSurge int32 `json:"maxSurge"`
	// MaxUnavailable is how many Pods below Spec.Replicas may be unavailable.
	MaxUnavailable int32 `json:"maxUnavailable"`
}

type DeploymentStatus struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	Replicas           int32 `json:"replicas,omitempty"`
	UpdatedReplicas    int32 `json:"updatedReplicas,omitempty"`
	ReadyReplicas      int32 `json:"readyReplicas,omitempty"`
	AvailableReplicas  int32 `json:"availableReplicas,omitempty"`
	// Available and Progressing are the Deployment's two conditions, as
	// Kubernetes' status.conditions entries of those types. They are
	// fields rather than a list so that DeploymentStatus stays a value
	// that == compares; a zero DeploymentCondition (Status "") is absent.
	Available   DeploymentCondition `json:"available,omitzero"`
	Progressing DeploymentCondition `json:"progressing,omitzero"`
}

// DeploymentCondition is one of a Deployment's conditions, shaped like
// Kubernetes' apps/v1 DeploymentCondition (its type is the field that
// holds it). LastTransitionTime is when Status last changed;
// LastUpdateTime is when the condition last had news to report (for
// Progressing: when progress was last seen).
type DeploymentCondition struct {
	Status             ConditionStatus `json:"status,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
	LastUpdateTime     time.Time       `json:"lastUpdateTime,omitzero"`
	LastTransitionTime time.Time       `json:"lastTransitionTime,omitzero"`
}

// Pod is a running copy of a container image.
//
//ctrl:kind wire=2
type Pod struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       PodSpec   `json:"spec"`
	Status     PodStatus `json:"status,omitempty"`
}

type PodSpec struct {
	Containers []Container `json:"containers"`
	NodeName   string      `json:"nodeName,omitempty"`
}

type Container struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

type PodPhase string

const (
	PodPending   PodPhase = "Pending"
	PodRunning   PodPhase = "Running"
	PodSucceeded PodPhase = "Succeeded"
	PodFailed    PodPhase = "Failed"
)

type PodConditionType string

// PodReady is true once the Pod's containers pass their readiness checks.
const PodReady PodConditionType = "Ready"

type ConditionStatus string

const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

type PodStatus struct {
	Phase      PodPhase       `json:"phase,omitempty"`
	Conditions []PodCondition `json:"conditions,omitempty"`
}

type PodCondition struct {
	Type   PodConditionType `json:"type"`
	Status ConditionStatus  `json:"status"`
}

// ConfigMap holds configuration as string pairs.
//
//ctrl:kind wire=3
type ConfigMap struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
}

// App is a custom resource: an application that wants one Deployment of
// its own, running Spec.Image with Spec.Replicas copies.
//
//ctrl:kind wire=4 apiVersion=serving.example.com/v1
type App struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       AppSpec   `json:"spec"`
	Status     AppStatus `json:"status,omitempty"`
}

type AppSpec struct {
	Image    string `json:"image"`
	Replicas int32  `json:"replicas"`
}

type AppStatus struct {
	ObservedGeneration int64       `json:"observedGeneration,omitempty"`
	Conditions         []Condition `json:"conditions,omitempty"`
}

// Condition is one aspect of an object's state, shaped like Kubernetes'
// metav1.Condition: Type names the aspect ("Ready"), Status says whether
// it holds, Reason is a word for programs and Message a sentence for
// people. LastTransitionTime is when Status last changed, not when the
// condition was last written.
type Condition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	ObservedGeneration int64           `json:"observedGeneration,omitempty"`
	LastTransitionTime time.Time       `json:"lastTransitionTime,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}
