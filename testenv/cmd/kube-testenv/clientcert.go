package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// cmdClientCert writes, into --out, a new CA (ca.crt) and a client
// certificate it signs for --user in --group (client.crt, client.key). A
// test starts an apiserver with --apiserver-arg=--client-ca-file=<bundle of
// such CAs> and authenticates with the certificates: rotating a client
// certificate from one CA to another is then observable as a change of
// user name.
func cmdClientCert(args []string) error {
	fs := flag.NewFlagSet("client-cert", flag.ExitOnError)
	out := fs.String("out", "", "directory to write ca.crt, client.crt and client.key into")
	user := fs.String("user", "", "the certificate's common name: the user name the apiserver sees")
	group := fs.String("group", "system:masters", "the certificate's organization: a group of the user")
	_ = fs.Parse(args)
	if *out == "" || *user == "" {
		return errors.New("--out and --user are required")
	}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "client-ca-" + *user},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		return err
	}
	return issueLeaf(ca, caKey, 2, &x509.Certificate{
		Subject:     pkix.Name{CommonName: *user, Organization: []string{*group}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, filepath.Join(*out, "client.crt"), filepath.Join(*out, "client.key"))
}
