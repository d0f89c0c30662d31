package main

import (
	"encoding/json"
	"testing"
)

func TestGoFieldFacts(t *testing.T) {
	raw, err := goFieldFacts()
	if err != nil {
		t.Fatal(err)
	}
	var facts goFields
	if err := json.Unmarshal(raw, &facts); err != nil {
		t.Fatal(err)
	}
	field := func(message string, number int) goField {
		t.Helper()
		m, ok := facts.Messages[message]
		if !ok {
			t.Fatalf("no message %s", message)
		}
		for _, f := range m.Fields {
			if f.Number == number {
				return f
			}
		}
		t.Fatalf("%s has no field %d", message, number)
		return goField{}
	}
	meta := field("k8s.io.api.core.v1.Pod", 1)
	if meta.JSON != "metadata" || meta.Pointer || !meta.OmitEmpty || meta.Kind != "struct" {
		t.Errorf("Pod.metadata: %+v", meta)
	}
	source := field("k8s.io.api.core.v1.Volume", 2)
	if source.Name != "volumeSource" || !source.Inline || source.JSON != "" {
		t.Errorf("Volume.volumeSource: %+v", source)
	}
	// A tag without name=: the name go-to-protobuf derives.
	if common := field("k8s.io.api.core.v1.EphemeralContainer", 1); common.Name != "ephemeralContainerCommon" {
		t.Errorf("EphemeralContainer.ephemeralContainerCommon: %+v", common)
	}
	if grace := field("k8s.io.api.core.v1.PodSpec", 4); !grace.Pointer || grace.Kind != "int64" {
		t.Errorf("PodSpec.terminationGracePeriodSeconds: %+v", grace)
	}
	if labels := field("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", 11); labels.Kind != "map" || labels.ElemKind != "string" {
		t.Errorf("ObjectMeta.labels: %+v", labels)
	}
	field("k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition", 1)
	field("k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIService", 1)
	field("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent", 2)
	field("k8s.io.apimachinery.pkg.runtime.Unknown", 2)
	// metav1.Time's wire form is hand-written: no tagged fields, no entry.
	if _, ok := facts.Messages["k8s.io.apimachinery.pkg.apis.meta.v1.Time"]; ok {
		t.Error("Time has an entry")
	}
}
