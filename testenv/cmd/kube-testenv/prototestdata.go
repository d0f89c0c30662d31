package main

// `kube-testenv proto-testdata`: reference protobuf bytes for the round-trip
// tests of the generated types. Each input file holds one object of one kind
// (`<group>.<version>.<Kind>.json`, the core group spelled `core`, as in
// k8s.io/api's testdata); the output pairs the upstream Go types' protobuf
// encoding with their JSON encoding of the identical Go object, so a test can
// decode both and expect the same value even where the input holds fields
// this release no longer has (Go's non-strict decode drops them).

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
)

// protoCodecs holds the serializers the apiserver answers with, over every
// built-in kind this binary links: client-go's clientset scheme plus the
// groups it leaves out (review and discovery kinds, CRDs, APIServices).
type protoCodecs struct {
	scheme *runtime.Scheme
	json   runtime.Serializer // non-strict: unknown fields are dropped
	proto  runtime.Serializer
}

func newProtoCodecs() (*protoCodecs, error) {
	s := runtime.NewScheme()
	// The meta kinds (Status, ListOptions, WatchEvent, ...) live in core v1.
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		admissionv1.AddToScheme, admissionv1beta1.AddToScheme,
		apidiscoveryv2.AddToScheme, apidiscoveryv2beta1.AddToScheme,
		imagepolicyv1alpha1.AddToScheme,
		apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme,
		apiregistrationv1.AddToScheme, apiregistrationv1beta1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	media := serializer.NewCodecFactory(s).SupportedMediaTypes()
	jsonInfo, ok := runtime.SerializerInfoForMediaType(media, runtime.ContentTypeJSON)
	if !ok {
		return nil, errors.New("codec factory has no JSON serializer")
	}
	protoInfo, ok := runtime.SerializerInfoForMediaType(media, runtime.ContentTypeProtobuf)
	if !ok {
		return nil, errors.New("codec factory has no protobuf serializer")
	}
	return &protoCodecs{scheme: s, json: jsonInfo.Serializer, proto: protoInfo.Serializer}, nil
}

// testdataName matches `<group>.<version>.<Kind>`; the group may hold dots.
var testdataName = regexp.MustCompile(`^(.+)\.(v[0-9]+(?:(?:alpha|beta)[0-9]+)?)\.([A-Z][A-Za-z0-9]*)$`)

// gvkFromTestdataName maps a file's base name (without `.json`) to the kind
// it must hold; the core group is spelled `core`.
func gvkFromTestdataName(name string) (schema.GroupVersionKind, bool) {
	m := testdataName.FindStringSubmatch(name)
	if m == nil {
		return schema.GroupVersionKind{}, false
	}
	group := m[1]
	if group == "core" {
		group = ""
	}
	return schema.GroupVersionKind{Group: group, Version: m[2], Kind: m[3]}, true
}

// referenceBytes is one converted object.
type referenceBytes struct {
	gvk    schema.GroupVersionKind
	object runtime.Object // decoded from the input, kind set where it has one
	pb     []byte         // `k8s\0` envelope, as the apiserver sends it
	json   []byte         // the same object, as the apiserver's JSON codec writes it (compact)
}

// errSkip marks an input that has no protobuf reference in this release.
type errSkip struct{ reason string }

func (e errSkip) Error() string { return e.reason }

// convert decodes one input document as the kind its name says and encodes
// it both ways. Kinds this release does not serve, or that have no protobuf
// encoding, give an errSkip.
func (c *protoCodecs) convert(gvk schema.GroupVersionKind, data []byte) (*referenceBytes, error) {
	if !c.scheme.Recognizes(gvk) {
		return nil, errSkip{fmt.Sprintf("%s is not a kind of this release's schemes", gvk)}
	}
	obj, actual, err := c.json.Decode(data, &gvk, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding JSON as %s: %w", gvk, err)
	}
	if *actual != gvk {
		return nil, fmt.Errorf("the document holds %s, the file name says %s", actual, gvk)
	}
	// Embedded documents (runtime.RawExtension: WatchEvent.object,
	// ControllerRevision.data, AdmissionReview.request.object, opaque device
	// parameters) keep the input's bytes, indentation included, and protobuf
	// carries them verbatim; Go's JSON encoder compacts them. Decoding Go's
	// own compact JSON once more gives the object as a client sending compact
	// JSON would have stored it, whose protobuf a test can reproduce.
	var compact bytes.Buffer
	if err := c.json.Encode(obj, &compact); err != nil {
		return nil, fmt.Errorf("encoding %s as JSON: %w", gvk, err)
	}
	if obj, _, err = c.json.Decode(compact.Bytes(), &gvk, nil); err != nil {
		return nil, fmt.Errorf("decoding %s from Go's own JSON: %w", gvk, err)
	}
	// The apiserver's versioning codec sets the kind before encoding; the
	// protobuf envelope's typeMeta is taken from it.
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	var pb, js bytes.Buffer
	if err := c.proto.Encode(obj, &pb); err != nil {
		if protobuf.IsNotMarshalable(err) {
			return nil, errSkip{fmt.Sprintf("%T has no protobuf encoding", obj)}
		}
		return nil, fmt.Errorf("encoding %s as protobuf: %w", gvk, err)
	}
	// Compact, as the apiserver writes it: indentation would again end up
	// inside the embedded documents of whoever decodes it.
	if err := c.json.Encode(obj, &js); err != nil {
		return nil, fmt.Errorf("encoding %s as JSON: %w", gvk, err)
	}
	return &referenceBytes{gvk: gvk, object: obj, pb: pb.Bytes(), json: js.Bytes()}, nil
}

// decodeAs decodes protobuf or JSON bytes with the codecs and sets the kind
// the decoder found, so the result compares equal to a converted object.
// gvk fills in what the bytes leave out: a WatchEvent has no kind of its own,
// so its envelope's typeMeta is empty and its JSON has no apiVersion/kind.
func (c *protoCodecs) decodeAs(dec runtime.Decoder, data []byte, gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, actual, err := dec.Decode(data, &gvk, nil)
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(*actual)
	return obj, nil
}

// checkRoundTrip decodes the written bytes again and reports how they differ
// from the object they were written from (nil when both decode to it).
func (c *protoCodecs) checkRoundTrip(ref *referenceBytes) error {
	for _, f := range []struct {
		format string
		dec    runtime.Decoder
		data   []byte
	}{{"protobuf", c.proto, ref.pb}, {"JSON", c.json, ref.json}} {
		back, err := c.decodeAs(f.dec, f.data, ref.gvk)
		if err != nil {
			return fmt.Errorf("decoding the written %s: %w", f.format, err)
		}
		if !apiequality.Semantic.DeepEqual(ref.object, back) {
			return fmt.Errorf("the written %s decodes to a different object", f.format)
		}
	}
	return nil
}

func cmdProtoTestdata(args []string) error {
	fs := flag.NewFlagSet("proto-testdata", flag.ExitOnError)
	in := fs.String("in", "", "directory of <group>.<version>.<Kind>.json files (e.g. ../shared/testdata/kubernetes-1.34)")
	out := fs.String("out", "", "output directory (created; existing files of the same names are replaced)")
	_ = fs.Parse(args)
	if *in == "" || *out == "" {
		return errors.New("--in and --out are required")
	}
	inputs, err := filepath.Glob(filepath.Join(*in, "*.json"))
	if err != nil {
		return err
	}
	if len(inputs) == 0 {
		return fmt.Errorf("no *.json files in %s", *in)
	}
	sort.Strings(inputs)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	codecs, err := newProtoCodecs()
	if err != nil {
		return err
	}
	var written int
	var skipped []string
	for _, path := range inputs {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		gvk, ok := gvkFromTestdataName(name)
		if !ok {
			skipped = append(skipped, name+": file name is not <group>.<version>.<Kind>.json")
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		ref, err := codecs.convert(gvk, data)
		var skip errSkip
		if errors.As(err, &skip) {
			skipped = append(skipped, name+": "+skip.reason)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		// Bytes that Go itself cannot read back as the same object would make
		// every test built on them fail for the wrong reason.
		if err := codecs.checkRoundTrip(ref); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for ext, b := range map[string][]byte{".pb": ref.pb, ".json": ref.json} {
			if err := os.WriteFile(filepath.Join(*out, name+ext), b, 0o644); err != nil {
				return err
			}
		}
		written++
	}
	var list strings.Builder
	for _, s := range skipped {
		list.WriteString(s + "\n")
	}
	if err := os.WriteFile(filepath.Join(*out, "skipped.txt"), []byte(list.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("proto-testdata: %d written, %d skipped (see %s)\n", written, len(skipped), filepath.Join(*out, "skipped.txt"))
	return nil
}
