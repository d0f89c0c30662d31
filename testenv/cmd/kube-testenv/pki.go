package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the file paths of the credentials generated for one testenv
// instance. Everything is created fresh on every start: nothing secret is
// ever reused between instances or committed.
type pki struct {
	dir         string
	caCert      string
	servingCert string
	servingKey  string
	saPub       string
	saKey       string
	tokenFile   string
	// The node's kubelet serving certificate and the client certificate the
	// apiserver presents to it (--kubelet-client-certificate).
	nodeCert          string
	nodeKey           string
	kubeletClientCert string
	kubeletClientKey  string
	adminToken        string
	unprivToken       string
	caPEM             []byte
	unprivUserName    string
}

const (
	adminUser  = "admin"
	unprivUser = "alice"
	// nodeName is the one node of a testenv.
	nodeName = "testenv-node"
)

// ECDSA P-256 keeps key generation in the millisecond range; RSA-2048 would
// add noticeable time to every test binary's startup.
func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{
		dir:               dir,
		caCert:            filepath.Join(dir, "ca.crt"),
		servingCert:       filepath.Join(dir, "serving.crt"),
		servingKey:        filepath.Join(dir, "serving.key"),
		saPub:             filepath.Join(dir, "sa.pub"),
		saKey:             filepath.Join(dir, "sa.key"),
		tokenFile:         filepath.Join(dir, "tokens.csv"),
		nodeCert:          filepath.Join(dir, "node.crt"),
		nodeKey:           filepath.Join(dir, "node.key"),
		kubeletClientCert: filepath.Join(dir, "apiserver-kubelet-client.crt"),
		kubeletClientKey:  filepath.Join(dir, "apiserver-kubelet-client.key"),
		unprivUserName:    unprivUser,
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kube-testenv-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	if err := os.WriteFile(p.caCert, p.caPEM, 0o644); err != nil {
		return nil, err
	}

	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	// The in-cluster names are included so that clients that resolve
	// "kubernetes.default.svc" to loopback (e.g. via a custom resolver) verify.
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.servingCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}), 0o644); err != nil {
		return nil, err
	}
	if err := writeKey(p.servingKey, srvKey); err != nil {
		return nil, err
	}

	// The node serves the kubelet API on 127.0.0.1 under the name a real
	// kubelet's self-signed certificate would carry.
	if err := issueLeaf(ca, caKey, 3, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{nodeName, "localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}, p.nodeCert, p.nodeKey); err != nil {
		return nil, err
	}
	// The identity kubeadm gives the apiserver towards kubelets.
	if err := issueLeaf(ca, caKey, 4, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, p.kubeletClientCert, p.kubeletClientKey); err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := writeKey(p.saKey, saKey); err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		return nil, err
	}

	p.adminToken = randomToken()
	p.unprivToken = randomToken()
	// Format: token,user,uid,"group1,group2". The unprivileged user only gets
	// system:authenticated (added by the apiserver), so RBAC denies nearly all.
	tokens := fmt.Sprintf("%s,%s,uid-admin,\"system:masters\"\n%s,%s,uid-%s\n",
		p.adminToken, adminUser, p.unprivToken, unprivUser, unprivUser)
	if err := os.WriteFile(p.tokenFile, []byte(tokens), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

// issueLeaf signs tmpl (subject, usages, SANs filled in by the caller) with
// the CA and writes the certificate and its new key.
func issueLeaf(ca *x509.Certificate, caKey *ecdsa.PrivateKey, serial int64, tmpl *x509.Certificate, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore = ca.NotBefore
	tmpl.NotAfter = ca.NotAfter
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return writeKey(keyPath, key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
