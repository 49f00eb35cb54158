package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// testCA writes a CA and one node certificate for 127.0.0.1 signed by it
// into dir, and returns the NARAD_CLUSTER_TLS_* settings that use them.
func testCA(t *testing.T, dir, name string) []string {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, nodeKey := key(), key()
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	nodeTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name + " node"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	nodeDER, err := x509.CreateCertificate(rand.Reader, nodeTmpl, ca, &nodeKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(nodeKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(file, typ string, der []byte) string {
		p := filepath.Join(dir, name+"-"+file)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return []string{
		"NARAD_CLUSTER_TLS_CA_FILE=" + write("ca.pem", "CERTIFICATE", caDER),
		"NARAD_CLUSTER_TLS_CERT_FILE=" + write("node.pem", "CERTIFICATE", nodeDER),
		"NARAD_CLUSTER_TLS_KEY_FILE=" + write("node-key.pem", "EC PRIVATE KEY", keyDER),
	}
}

// TestClusterMutualTLS: Raft and node RPC over mutual TLS. A cluster whose
// nodes hold certificates from its CA forms and routes across nodes (its
// commits over framed connections, the default, which run TLS too); a
// node with the right secret but a certificate from another CA is
// never admitted.
func TestClusterMutualTLS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	dir := t.TempDir()
	good := testCA(t, dir, "cluster")
	nodes := startCluster(t, 3, good...)
	for _, n := range nodes {
		if strings.Contains(n.logs.String(), "PLAINTEXT") {
			t.Fatalf("%s says its cluster plane is plaintext", n.id)
		}
	}
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "sealed", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		eventually(t, 10*time.Second, n.id+" learns the topic", func() bool {
			_, err := n.c.GetTopic(ctx, "sealed")
			return err == nil
		})
	}
	accepted := map[int]bool{}
	for i := 0; i < 60; i++ {
		if err := nodes[i%3].c.Produce(ctx, "sealed", []byte(fmt.Sprintf("id-%d", i)), client.ProduceOptions{}); err != nil {
			t.Fatal(err)
		}
		accepted[i] = true
	}
	checkLedger(t, "sealed", accepted, drain(t, nodes[1], "sealed", 4))

	rogue := joinNode(t, nodes, "n5", testSecret, append(testCA(t, dir, "rogue"), "NARAD_LOG_LEVEL=debug")...)
	eventually(t, 30*time.Second, "two join rounds of the rogue node refused", func() bool {
		return strings.Count(rogue.logs.String(), "join attempt failed") >= 6
	})
	if !strings.Contains(rogue.logs.String(), "certificate") {
		t.Fatalf("the rogue's joins failed, but not on its certificate:\n%s", tail(rogue.logs.String(), 2000))
	}
	if strings.Contains(rogue.logs.String(), "admitted") {
		t.Fatal("the node with a foreign certificate was admitted")
	}
	if err := rogue.c.Readyz(ctx); err == nil {
		t.Fatal("the node with a foreign certificate became ready")
	}
	for _, m := range clusterMembers(t, nodes[0]) {
		if m.ID == "n5" {
			t.Fatal("the node with a foreign certificate is a member")
		}
	}
}
