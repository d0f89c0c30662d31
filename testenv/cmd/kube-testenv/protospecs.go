package main

// The protobuf half of `kube-testenv specs`: the generated.proto files of the
// modules whose types the apiserver serves, and facts about the Go types
// behind them that the .proto files do not carry (pointer or not, JSON
// omission), so the generator can write the bytes the Go types write.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/scheme"
)

// protoModules are the modules whose generated.proto files are captured:
// every one of them, served or not (apimachinery's testapigroup too), so the
// capture needs no list of packages to keep in step with the apiserver.
var protoModules = []string{
	"k8s.io/api",
	"k8s.io/apimachinery",
	"k8s.io/apiextensions-apiserver",
	"k8s.io/kube-aggregator",
}

// goFieldsFile is the facts file, relative to the proto directory.
const goFieldsFile = "go-fields.json"

// writeProto replaces <out>/proto with the modules' generated.proto files at
// their Go import paths (proto/k8s.io/api/core/v1/generated.proto, as the
// files import each other) and the facts file. It returns the files written,
// relative to out, with their contents, for SHA256SUMS.
func writeProto(out string) (map[string][]byte, error) {
	dir := filepath.Join(out, "proto")
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, mod := range protoModules {
		version, err := builtVersion(mod)
		if err != nil {
			return nil, err
		}
		src, err := moduleDir(mod, version)
		if err != nil {
			return nil, err
		}
		err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "generated.proto" {
				return err
			}
			rel, err := filepath.Rel(src, path)
			if err != nil {
				return err
			}
			body, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files[filepath.ToSlash(filepath.Join("proto", mod, rel))] = body
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s@%s: %w", mod, version, err)
		}
	}
	facts, err := goFieldFacts()
	if err != nil {
		return nil, err
	}
	files["proto/"+goFieldsFile] = facts
	for rel, body := range files {
		path := filepath.Join(out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, body, 0o644); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// builtVersion is the version of mod compiled into this binary (after
// go.mod's replace directives), so the .proto files match the Go types the
// apiserver runs and the facts below describe.
func builtVersion(mod string) (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("no module information in this binary")
	}
	for _, dep := range info.Deps {
		if dep.Path != mod {
			continue
		}
		if dep.Replace != nil {
			return dep.Replace.Version, nil
		}
		return dep.Version, nil
	}
	return "", fmt.Errorf("module %s is not compiled into this binary", mod)
}

// moduleDir asks the go command for the module's source directory (from
// the module cache, downloading it if the cache was cleaned).
func moduleDir(mod, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod+"@"+version)
	cmd.Dir = os.TempDir() // outside any module, so no go.mod interferes
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", mod, version, err, stderr.String())
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(stdout, &info); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", mod, version, err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: no source directory: %s", mod, version, info.Error)
	}
	return info.Dir, nil
}

// goFields is the facts file: per proto message (k8s.io.api.core.v1.Pod),
// its Go type and its fields that carry a protobuf tag.
type goFields struct {
	Messages map[string]goMessage `json:"messages"`
}

type goMessage struct {
	// GoType is the Go package path and type name (k8s.io/api/core/v1.Pod).
	GoType string `json:"goType"`
	// Fields in protobuf field-number order.
	Fields []goField `json:"fields"`
}

type goField struct {
	Number int `json:"number"`
	// Name is the proto field name: the tag's name=, else the Go field name
	// with a lower-case first letter (as go-to-protobuf derives it).
	Name   string `json:"name"`
	GoName string `json:"goName"`
	// JSON is the JSON name; empty for a struct inlined into the JSON object
	// (`json:",inline"`), which protobuf keeps as one nested message.
	JSON      string `json:"json"`
	Inline    bool   `json:"inline"`
	OmitEmpty bool   `json:"omitempty"`
	OmitZero  bool   `json:"omitzero"`
	// Pointer: the Go field is a pointer, so nil is left out on the wire
	// while a non-pointer zero value is written.
	Pointer bool `json:"pointer"`
	// Kind is the reflect kind of the field's type, past the pointer.
	Kind string `json:"kind"`
	// ElemKind is the kind of a slice's elements or a map's values.
	ElemKind string `json:"elemKind,omitempty"`
	// GoType spells the field's type with full package paths.
	GoType string `json:"goType"`
	// Tag is the protobuf struct tag as written (wire type, number, label,
	// name, casttype...).
	Tag string `json:"tag"`
}

// goFieldFacts walks every type of the schemes the apiserver's clients use
// (built-in kinds, CustomResourceDefinitions, APIServices, the meta types
// every group registers), recursively through struct fields, and returns
// the facts file as stable JSON (sorted keys, two-space indent).
func goFieldFacts() ([]byte, error) {
	roots := []reflect.Type{
		reflect.TypeOf(runtime.Unknown{}),
		reflect.TypeOf(metav1.WatchEvent{}),
	}
	for _, s := range []*runtime.Scheme{kubescheme.Scheme, apiextensionsscheme.Scheme, aggregatorscheme.Scheme} {
		for _, t := range s.AllKnownTypes() {
			roots = append(roots, t)
		}
	}
	facts := goFields{Messages: map[string]goMessage{}}
	seen := map[reflect.Type]bool{}
	for _, t := range roots {
		if err := collectMessages(t, seen, facts.Messages); err != nil {
			return nil, err
		}
	}
	return normalizeJSONValue(facts)
}

// collectMessages records t (a struct of a k8s.io package, past pointers,
// slices and maps) and every such struct its fields hold.
func collectMessages(t reflect.Type, seen map[reflect.Type]bool, out map[string]goMessage) error {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || !strings.HasPrefix(t.PkgPath(), "k8s.io/") || seen[t] {
		return nil
	}
	seen[t] = true
	msg := goMessage{GoType: t.PkgPath() + "." + t.Name()}
	numbers := map[int]string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if err := collectMessages(f.Type, seen, out); err != nil {
			return err
		}
		tag, ok := f.Tag.Lookup("protobuf")
		if !ok || tag == "-" {
			continue
		}
		field, err := fieldFacts(f, tag)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", msg.GoType, f.Name, err)
		}
		if other, dup := numbers[field.Number]; dup {
			return fmt.Errorf("%s: fields %s and %s have protobuf number %d", msg.GoType, other, f.Name, field.Number)
		}
		numbers[field.Number] = f.Name
		msg.Fields = append(msg.Fields, field)
	}
	if len(msg.Fields) == 0 {
		return nil // no wire form of its own (metav1.Time's is hand-written)
	}
	sort.Slice(msg.Fields, func(i, j int) bool { return msg.Fields[i].Number < msg.Fields[j].Number })
	out[protoMessageName(t)] = msg
	return nil
}

// protoMessageName is the message go-to-protobuf makes of a Go type: the
// package path with dots for slashes and underscores for dashes, then the
// type name (k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON).
func protoMessageName(t reflect.Type) string {
	pkg := strings.NewReplacer("/", ".", "-", "_").Replace(t.PkgPath())
	return pkg + "." + t.Name()
}

func fieldFacts(f reflect.StructField, tag string) (goField, error) {
	parts := strings.Split(tag, ",")
	if len(parts) < 2 {
		return goField{}, fmt.Errorf("protobuf tag %q has no field number", tag)
	}
	number, err := strconv.Atoi(parts[1])
	if err != nil || number <= 0 {
		return goField{}, fmt.Errorf("protobuf tag %q: bad field number", tag)
	}
	name := strings.ToLower(f.Name[:1]) + f.Name[1:]
	for _, p := range parts[2:] {
		if n, ok := strings.CutPrefix(p, "name="); ok {
			name = n
		}
	}
	jsonName, jsonOpts, _ := strings.Cut(f.Tag.Get("json"), ",")
	opts := "," + jsonOpts + ","
	t := f.Type
	pointer := t.Kind() == reflect.Pointer
	if pointer {
		t = t.Elem()
	}
	field := goField{
		Number: number,
		Name:   name,
		GoName: f.Name,
		JSON:   jsonName,
		// Go's encoding/json inlines an embedded struct without a JSON
		// name whether or not the tag says `,inline` (1.37's types write
		// `json:""`).
		Inline:    strings.Contains(opts, ",inline,") || (f.Anonymous && jsonName == "" && t.Kind() == reflect.Struct),
		OmitEmpty: strings.Contains(opts, ",omitempty,"),
		OmitZero:  strings.Contains(opts, ",omitzero,"),
		Pointer:   pointer,
		Kind:      t.Kind().String(),
		GoType:    goTypeName(f.Type),
		Tag:       tag,
	}
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
		field.ElemKind = t.Elem().Kind().String()
	}
	return field, nil
}

// goTypeName spells a type with full package paths ([]*k8s.io/api/core/v1.Pod).
func goTypeName(t reflect.Type) string {
	switch {
	case t.Name() != "" && t.PkgPath() != "":
		return t.PkgPath() + "." + t.Name()
	case t.Name() != "":
		return t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + goTypeName(t.Elem())
	case reflect.Slice:
		return "[]" + goTypeName(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), goTypeName(t.Elem()))
	case reflect.Map:
		return "map[" + goTypeName(t.Key()) + "]" + goTypeName(t.Elem())
	}
	return t.String()
}

// normalizeJSONValue marshals v in the form normalizeJSON gives documents.
func normalizeJSONValue(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return normalizeJSON(b)
}
