package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The saved specs must stay byte-stable: sorted keys, no HTML escaping,
// numbers as served (no float round-trip).
func TestNormalizeJSON(t *testing.T) {
	got, err := normalizeJSON([]byte(`{"b":1e400,"a":"<x> & y","c":[12345678901234567890]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": \"<x> & y\",\n  \"b\": 1e400,\n  \"c\": [\n    12345678901234567890\n  ]\n}\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGroupVersionPath(t *testing.T) {
	for p, want := range map[string]bool{
		"api/v1": true, "apis/apps/v1": true, "apis/resource.k8s.io/v1beta2": true,
		"api": false, "apis": false, "version": false, ".well-known/openid-configuration": false,
		"openid/v1/jwks": false, "apis/apps": false,
	} {
		if groupVersionPath.MatchString(p) != want {
			t.Errorf("%s: want %v", p, want)
		}
	}
}

func TestPKI(t *testing.T) {
	p, err := newPKI(filepath.Join(t.TempDir(), "pki"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.LoadX509KeyPair(p.servingCert, p.servingKey); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p.caPEM) {
		t.Fatal("bad CA PEM")
	}
	pair, _ := tls.LoadX509KeyPair(p.servingCert, p.servingKey)
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"}); err != nil {
		t.Fatalf("serving cert not valid for 127.0.0.1: %v", err)
	}
	tokens, _ := os.ReadFile(p.tokenFile)
	lines := strings.Split(strings.TrimSpace(string(tokens)), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], `,admin,uid-admin,"system:masters"`) ||
		!strings.HasPrefix(lines[1], p.unprivToken+",alice,") {
		t.Fatalf("tokens.csv:\n%s", tokens)
	}
}

func TestLockStateDir(t *testing.T) {
	dir := t.TempDir()
	f, err := lockStateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := lockStateDir(dir); err == nil || !strings.Contains(err.Error(), "is locked") {
		t.Fatalf("second lock: %v", err)
	}
}
