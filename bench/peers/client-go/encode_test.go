package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/client-go/kubernetes/scheme"
)

// The benchmark's protobuf input is the same list as its JSON input: what
// `decode` reads from the .pb equals what it reads from the JSON.
func TestEncodeProtobufKeepsTheList(t *testing.T) {
	in := "../../../../shared/bench/podlist-5000.json.gz"
	out := filepath.Join(t.TempDir(), "podlist.pb")
	result, err := encodeProtobuf(in, out)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pb, []byte("k8s\x00")) || result.BytesOut != len(pb) || result.Pods != 5000 {
		t.Fatalf("result %+v, %d bytes starting % x", result, len(pb), pb[:min(len(pb), 8)])
	}
	json, err := readMaybeGzipped(in)
	if err != nil {
		t.Fatal(err)
	}
	decoder := scheme.Codecs.UniversalDeserializer()
	fromJSON, _, err := decoder.Decode(json, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	fromPB, _, err := decoder.Decode(pb, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Protobuf carries no TypeMeta inside objects: the envelope names the
	// list's kind, and the items' kind/apiVersion (which this JSON file
	// writes, unlike the apiserver) are not encoded.
	fromPB.(*corev1.PodList).SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	for i := range fromJSON.(*corev1.PodList).Items {
		fromJSON.(*corev1.PodList).Items[i].TypeMeta = metav1.TypeMeta{}
	}
	if !apiequality.Semantic.DeepEqual(fromJSON, fromPB) {
		// Name the first pod that differs: a diff of the whole list is too slow.
		a, b := fromJSON.(*corev1.PodList), fromPB.(*corev1.PodList)
		if !apiequality.Semantic.DeepEqual(a.ListMeta, b.ListMeta) {
			t.Fatalf("list metadata differs (-json +protobuf):\n%s", diff.Diff(a.ListMeta, b.ListMeta))
		}
		for i := range min(len(a.Items), len(b.Items)) {
			if !apiequality.Semantic.DeepEqual(a.Items[i], b.Items[i]) {
				t.Fatalf("pod %d differs (-json +protobuf):\n%s", i, diff.Diff(a.Items[i], b.Items[i]))
			}
		}
		t.Fatalf("%d pods from JSON, %d from protobuf", len(a.Items), len(b.Items))
	}
	if _, err := decode(out, 1); err != nil {
		t.Fatalf("decode --file %s: %v", out, err)
	}
}
