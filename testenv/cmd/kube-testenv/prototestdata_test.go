package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/client-go/kubernetes/scheme"
)

// The round-trip testdata of the previous release, beside the repository.
const protoTestdataSource = "../../../../shared/testdata/kubernetes-1.34"

func TestProtoTestdataName(t *testing.T) {
	for name, want := range map[string]schema.GroupVersionKind{
		"core.v1.Pod":                                {Version: "v1", Kind: "Pod"},
		"apps.v1beta2.Deployment":                    {Group: "apps", Version: "v1beta2", Kind: "Deployment"},
		"resource.k8s.io.v1alpha3.DeviceTaintRule":   {Group: "resource.k8s.io", Version: "v1alpha3", Kind: "DeviceTaintRule"},
		"flowcontrol.apiserver.k8s.io.v1.FlowSchema": {Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "FlowSchema"},
	} {
		if got, ok := gvkFromTestdataName(name); !ok || got != want {
			t.Errorf("%s: got %v %v, want %v", name, got, ok, want)
		}
	}
	for _, name := range []string{"resource.k8s.io.v1alpha3.DeviceTaintRule.after_roundtrip", "Pod", "v1.Pod", "core.1.Pod"} {
		if got, ok := gvkFromTestdataName(name); ok {
			t.Errorf("%s: want no kind, got %v", name, got)
		}
	}
}

// Each .pb is the apiserver's protobuf envelope of the source object: client-go's
// own deserializer (which recognises the `k8s\0` magic) reads it back as the
// object the source JSON decodes to; the .json is the same object.
func TestProtoTestdataRoundTrip(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	kinds := []string{"core.v1.Pod", "apps.v1.ControllerRevision", "core.v1.WatchEvent", "resource.k8s.io.v1alpha3.DeviceTaintRule"}
	for _, name := range append(kinds, "storagemigration.k8s.io.v1alpha1.StorageVersionMigration") {
		data, err := os.ReadFile(filepath.Join(protoTestdataSource, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, name+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(in, "notes.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmdProtoTestdata([]string{"--in", in, "--out", out}); err != nil {
		t.Fatal(err)
	}

	decoder := scheme.Codecs.UniversalDeserializer()
	jsonInfo, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	jsonCodec := jsonInfo.Serializer
	decode := func(path string, gvk schema.GroupVersionKind) runtime.Object {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := decoder.Decode(data, &gvk, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		return obj
	}
	for _, name := range kinds {
		gvk, _ := gvkFromTestdataName(name)
		pb, err := os.ReadFile(filepath.Join(out, name+".pb"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(pb, []byte("k8s\x00")) {
			t.Errorf("%s.pb: no k8s\\0 envelope: % x", name, pb[:min(len(pb), 8)])
		}
		// The source as a client sending compact JSON would have it stored:
		// embedded documents (WatchEvent.object, ControllerRevision.data)
		// keep their bytes verbatim, so the input's indentation is dropped
		// by a round trip through Go's own (compact) JSON first.
		var compact bytes.Buffer
		if err := jsonCodec.Encode(decode(filepath.Join(in, name+".json"), gvk), &compact); err != nil {
			t.Fatal(err)
		}
		source, _, err := decoder.Decode(compact.Bytes(), &gvk, nil)
		if err != nil {
			t.Fatal(err)
		}
		source.GetObjectKind().SetGroupVersionKind(gvk)
		fromPB := decode(filepath.Join(out, name+".pb"), gvk)
		fromJSON := decode(filepath.Join(out, name+".json"), gvk)
		if !apiequality.Semantic.DeepEqual(source, fromPB) {
			t.Errorf("%s: .pb decodes to another object than the source (-source +pb):\n%s", name, diff.Diff(source, fromPB))
		}
		if !apiequality.Semantic.DeepEqual(source, fromJSON) {
			t.Errorf("%s: .json decodes to another object than the source (-source +json):\n%s", name, diff.Diff(source, fromJSON))
		}
	}

	// The envelope names the kind; a WatchEvent has none of its own.
	pod := decode(filepath.Join(out, "core.v1.Pod.pb"), schema.GroupVersionKind{}).(*corev1.Pod)
	if pod.Name != "nameValue" || len(pod.Spec.Containers) == 0 {
		t.Errorf("Pod from .pb: %+v", pod.ObjectMeta)
	}
	// The embedded document is compact in both files, as a client would send it.
	event := decode(filepath.Join(out, "core.v1.WatchEvent.pb"), schema.GroupVersionKind{Version: "v1", Kind: "WatchEvent"}).(*metav1.WatchEvent)
	if raw := string(event.Object.Raw); !strings.HasPrefix(raw, `{"apiVersion":"example.com/v1",`) {
		t.Errorf("WatchEvent object raw: %s", raw)
	}
	// Fields 1.34 had and this release dropped are gone from both files.
	rule := decode(filepath.Join(out, "resource.k8s.io.v1alpha3.DeviceTaintRule.json"), schema.GroupVersionKind{}).(*resourcev1alpha3.DeviceTaintRule)
	if js, _ := os.ReadFile(filepath.Join(out, "resource.k8s.io.v1alpha3.DeviceTaintRule.json")); bytes.Contains(js, []byte("deviceClassName")) || rule.Spec.DeviceSelector == nil {
		t.Errorf("DeviceTaintRule: %s", js)
	}

	skipped, err := os.ReadFile(filepath.Join(out, "skipped.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := "notes: file name is not <group>.<version>.<Kind>.json\n" +
		"storagemigration.k8s.io.v1alpha1.StorageVersionMigration: storagemigration.k8s.io/v1alpha1, Kind=StorageVersionMigration is not a kind of this release's schemes\n"
	if string(skipped) != want {
		t.Errorf("skipped.txt:\n%s\nwant\n%s", skipped, want)
	}
	for _, name := range []string{"notes", "storagemigration.k8s.io.v1alpha1.StorageVersionMigration"} {
		if _, err := os.Stat(filepath.Join(out, name+".pb")); err == nil {
			t.Errorf("%s.pb written for a skipped input", name)
		}
	}
}
