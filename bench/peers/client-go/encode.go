package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

type encodeResult struct {
	Workload string `json:"workload"`
	Pods     int    `json:"pods"`
	BytesIn  int    `json:"bytes_in"`
	BytesOut int    `json:"bytes_out"`
}

// encodeProtobuf turns a PodList JSON file (gzipped or not) into the bytes
// the apiserver sends for `Accept: application/vnd.kubernetes.protobuf`: the
// `k8s\0` envelope around the list, written by the scheme's protobuf
// serializer. `decode` reads the result unchanged (the universal
// deserializer recognises the envelope).
func encodeProtobuf(in, out string) (*encodeResult, error) {
	if in == "" || out == "" {
		return nil, fmt.Errorf("--in and --out are required")
	}
	data, err := readMaybeGzipped(in)
	if err != nil {
		return nil, err
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in, err)
	}
	list, ok := obj.(*corev1.PodList)
	if !ok {
		return nil, fmt.Errorf("%s holds a %T, not a PodList", in, obj)
	}
	// The envelope's typeMeta comes from the object, as the apiserver's
	// versioning codec sets it.
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return nil, fmt.Errorf("client-go's scheme has no protobuf serializer")
	}
	var buf bytes.Buffer
	if err := info.Serializer.Encode(list, &buf); err != nil {
		return nil, err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return &encodeResult{Workload: "encode-protobuf", Pods: len(list.Items), BytesIn: len(data), BytesOut: buf.Len()}, nil
}

// readMaybeGzipped reads a file, gunzipping it when it starts with gzip's magic.
func readMaybeGzipped(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		return data, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return plain, nil
}
