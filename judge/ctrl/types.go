package ctrl

import "time"

// Kind names an object type, as in a manifest's "kind:" field.
type Kind string

const (
	KindDeployment Kind = "Deployment"
	KindPod        Kind = "Pod"
	KindConfigMap  Kind = "ConfigMap"
)

// TypeMeta is the kind and apiVersion of a manifest.
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

// Object is any object the Client can read or write: *Deployment, *Pod,
// *ConfigMap.
type Object interface {
	GetObjectMeta() *ObjectMeta
	GetObjectKind() Kind
	reset()
}

// ObjectList is a list the Client can fill: *DeploymentList, *PodList,
// *ConfigMapList.
type ObjectList interface {
	itemKind() Kind
}

// Deployment asks for Replicas copies of a Pod template and rolls them over
// to a new template at a pace set by the strategy.
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
}

type DeploymentList struct {
	Items []Deployment `json:"items"`
}

// Pod is a running copy of a container image.
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
	ConditionTrue  ConditionStatus = "True"
	ConditionFalse ConditionStatus = "False"
)

type PodStatus struct {
	Phase      PodPhase       `json:"phase,omitempty"`
	Conditions []PodCondition `json:"conditions,omitempty"`
}

type PodCondition struct {
	Type   PodConditionType `json:"type"`
	Status ConditionStatus  `json:"status"`
}

type PodList struct {
	Items []Pod `json:"items"`
}

// ConfigMap holds configuration as string pairs.
type ConfigMap struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
}

type ConfigMapList struct {
	Items []ConfigMap `json:"items"`
}

func (*Deployment) GetObjectKind() Kind { return KindDeployment }
func (*Pod) GetObjectKind() Kind        { return KindPod }
func (*ConfigMap) GetObjectKind() Kind  { return KindConfigMap }

func (*DeploymentList) itemKind() Kind { return KindDeployment }
func (*PodList) itemKind() Kind        { return KindPod }
func (*ConfigMapList) itemKind() Kind  { return KindConfigMap }

func (o *Deployment) reset() { *o = Deployment{} }
func (o *Pod) reset()        { *o = Pod{} }
func (o *ConfigMap) reset()  { *o = ConfigMap{} }

// decodeList fills list with n items from d, unless an item is of
// another kind. A type switch, not a method of the interface: the decoder
// passed through an interface call would escape, and cost an allocation
// in every reply.
func decodeList(d *decoder, list ObjectList, n int) bool {
	switch l := list.(type) {
	case *DeploymentList:
		items, ok := decodeItems[Deployment](d, n)
		if ok && d.err == nil {
			l.Items = items
		}
		return ok
	case *PodList:
		items, ok := decodeItems[Pod](d, n)
		if ok && d.err == nil {
			l.Items = items
		}
		return ok
	case *ConfigMapList:
		items, ok := decodeItems[ConfigMap](d, n)
		if ok && d.err == nil {
			l.Items = items
		}
		return ok
	}
	return false
}

// NewObject returns an empty object of the kind, or nil for an unknown kind.
func NewObject(k Kind) Object {
	switch k {
	case KindDeployment:
		return &Deployment{}
	case KindPod:
		return &Pod{}
	case KindConfigMap:
		return &ConfigMap{}
	}
	return nil
}
