package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The Go types of examples/crds/greeting.yaml, as controller-gen would
// make them; the DeepCopy methods are written out because the benchmark
// builds offline, without code generators.

// GroupVersion is the API group and version of Greeting.
var GroupVersion = schema.GroupVersion{Group: "example.com", Version: "v1"}

// SchemeBuilder registers Greeting and GreetingList with a scheme, on
// apimachinery's builder (controller-runtime's scheme.Builder is deprecated).
var SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &Greeting{}, &GreetingList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}

// GreetingSpec is the desired state: the message, kept in Replicas ConfigMaps.
type GreetingSpec struct {
	Message string `json:"message"`
	// Defaulted to 1 by the apiserver.
	Replicas *int32 `json:"replicas,omitempty"`
}

// GreetingStatus is the state the operator last saw through.
type GreetingStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// Greeting is a message kept in ConfigMaps <name>-0 … <name>-(replicas-1).
type Greeting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GreetingSpec   `json:"spec"`
	Status GreetingStatus `json:"status,omitempty"`
}

// GreetingList is a list of Greetings.
type GreetingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Greeting `json:"items"`
}

// DeepCopyInto copies the receiver into out.
func (in *GreetingSpec) DeepCopyInto(out *GreetingSpec) {
	*out = *in
	if in.Replicas != nil {
		out.Replicas = new(int32)
		*out.Replicas = *in.Replicas
	}
}

// DeepCopyInto copies the receiver into out.
func (in *GreetingStatus) DeepCopyInto(out *GreetingStatus) {
	*out = *in
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

// DeepCopyInto copies the receiver into out.
func (in *Greeting) DeepCopyInto(out *Greeting) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of the receiver.
func (in *Greeting) DeepCopy() *Greeting {
	if in == nil {
		return nil
	}
	out := new(Greeting)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *Greeting) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the receiver into out.
func (in *GreetingList) DeepCopyInto(out *GreetingList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Greeting, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of the receiver.
func (in *GreetingList) DeepCopy() *GreetingList {
	if in == nil {
		return nil
	}
	out := new(GreetingList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *GreetingList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}
