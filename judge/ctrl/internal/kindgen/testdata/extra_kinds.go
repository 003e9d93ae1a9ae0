// The kinds to come, in miniature: every field type kindgen supports, and
// the shapes that take a slice off the slab (a struct twice between two
// ObjectMetas, slices in slices). TestGeneratedCodeOfEveryFieldType adds
// them to a copy of package ctrl.

package ctrl

import "time"

//ctrl:kind wire=9 apiVersion=batch/v1
type Job struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       JobSpec
	Status     JobStatus
}

type JobSpec struct {
	Parallelism *int32
	Suspend     *bool
	Template    PodTemplateSpec
	Selector    *LabelSelector
	Ports       []Port
	Subsets     []Subset
	Note        *string
	Phase       *PodPhase
	Names       []string
	Flag        bool
	Pinned      *Port
}
type Port struct {
	Name string
	Port int32
}
type Subset struct {
	Addresses []Address
	NotReady  []Address
	Since     time.Time
	Ptr       *Inner
}
type Address struct {
	IP string
	At *time.Time
}
type Inner struct {
	Conditions []PodCondition
	Data       map[string]string
	Spec       PodSpec
}
type JobStatus struct {
	Active     int32
	StartTime  *time.Time
	Conditions []PodCondition
	Containers []Container
}

//ctrl:kind wire=10
type Lease struct {
	TypeMeta
	ObjectMeta
	Holder  string
	Renewed *time.Time
	Spec    PodSpec
	Extra   *PodSpec
}
