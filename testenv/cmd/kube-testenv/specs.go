package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Only group/version documents are saved (api/v1, apis/<group>/<version>);
// the index also lists discovery-only paths such as "version", "apis" and
// ".well-known/openid-configuration" that the generator doesn't use.
var groupVersionPath = regexp.MustCompile(`^(api/v[0-9a-z]+|apis/[^/]+/v[0-9a-z]+)$`)

func cmdSpecs(args []string) error {
	fs := flag.NewFlagSet("specs", flag.ExitOnError)
	o := startFlags(fs)
	out := fs.String("out", "", "output directory, e.g. specs/kubernetes/1.35")
	_ = fs.Parse(args)
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	tmp, err := os.MkdirTemp("", "kube-testenv-specs-")
	if err != nil {
		return err
	}
	o.stateDir = tmp
	o.noNode = true // the documents don't depend on a node
	lock, err := lockStateDir(tmp)
	if err != nil {
		return err
	}
	defer lock.Close()
	s, err := newSupervisor(*o)
	if err != nil {
		return err
	}
	if err := s.startAll(); err != nil {
		return fmt.Errorf("%w (state kept in %s)", err, tmp)
	}
	err = s.fetchSpecs(*out)
	s.shutdown(10 * time.Second)
	if err != nil {
		return fmt.Errorf("%w (logs in %s)", err, tmp)
	}
	return os.RemoveAll(tmp)
}

func (s *supervisor) fetchSpecs(out string) error {
	code, body, err := s.get("/openapi/v3")
	if err != nil || code != 200 {
		return fmt.Errorf("GET /openapi/v3: %d %v", code, err)
	}
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &index); err != nil {
		return err
	}
	// Start from an empty tree so that groups the server no longer serves
	// disappear from the capture.
	for _, d := range []string{"api", "apis", "proto", "VERSION", "SHA256SUMS"} {
		if err := os.RemoveAll(filepath.Join(out, d)); err != nil {
			return err
		}
	}
	var names []string
	for p := range index.Paths {
		if groupVersionPath.MatchString(p) {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	var sums strings.Builder
	for _, p := range names {
		var doc []byte
		// The OpenAPI v3 handler builds documents lazily; retry briefly in
		// case a freshly registered group isn't servable yet.
		for attempt := 0; ; attempt++ {
			code, doc, err = s.get(index.Paths[p].ServerRelativeURL)
			if err == nil && code == 200 || attempt == 5 {
				break
			}
			time.Sleep(time.Second)
		}
		if err != nil || code != 200 {
			return fmt.Errorf("GET %s: %d %v", p, code, err)
		}
		pretty, err := normalizeJSON(doc)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		file := p + ".json"
		if err := os.MkdirAll(filepath.Join(out, filepath.Dir(file)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, file), pretty, 0o644); err != nil {
			return err
		}
		h := sha256.Sum256(pretty)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), file)
	}
	protoFiles, err := writeProto(out)
	if err != nil {
		return fmt.Errorf("protobuf sources: %w", err)
	}
	protoNames := make([]string, 0, len(protoFiles))
	for name := range protoFiles {
		protoNames = append(protoNames, name)
	}
	sort.Strings(protoNames) // "proto/..." sorts after the documents' "api..."
	for _, name := range protoNames {
		h := sha256.Sum256(protoFiles[name])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), name)
	}
	if err := os.WriteFile(filepath.Join(out, "VERSION"), []byte(s.version+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("kube-testenv: wrote %d OpenAPI v3 documents and %d protobuf files from %s to %s\n",
		len(names), len(protoNames), s.version, out)
	return nil
}

// normalizeJSON gives a stable, diff-friendly form: sorted keys, two-space
// indent, no HTML escaping, numbers kept verbatim, trailing newline.
func normalizeJSON(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
