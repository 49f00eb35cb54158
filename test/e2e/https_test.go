package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestClientAPIOverHTTPS: with NARAD_HTTP_TLS_CERT_FILE and _KEY_FILE the
// client API is HTTPS only; the CLI reaches it with --ca-file, and a plain
// HTTP request gets no answer.
func TestClientAPIOverHTTPS(t *testing.T) {
	dir := t.TempDir()
	files := testCA(t, dir, "api") // CA, cert and key for 127.0.0.1
	get := func(prefix string) string {
		for _, f := range files {
			if v, ok := strings.CutPrefix(f, prefix); ok {
				return v
			}
		}
		t.Fatalf("no %s", prefix)
		return ""
	}
	caFile := get("NARAD_CLUSTER_TLS_CA_FILE=")
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	n := &node{t: t, id: "node-1", dir: t.TempDir(), http: freeAddr(t), cluster: freeAddr(t),
		env: []string{"NARAD_HTTP_TLS_CERT_FILE=" + get("NARAD_CLUSTER_TLS_CERT_FILE="),
			"NARAD_HTTP_TLS_KEY_FILE=" + get("NARAD_CLUSTER_TLS_KEY_FILE=")}}
	n.c = client.New("https://"+n.http, "", "", &http.Client{Transport: tr, Timeout: 30 * time.Second})
	n.start()
	t.Cleanup(func() { n.stopWith(syscall.SIGKILL) })

	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "secure", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(naradBin, "topic", "ls", "-s", "https://"+n.http, "--ca-file", caFile).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "secure") {
		t.Fatalf("narad topic ls over https: %v\n%s", err, out)
	}
	// Without the CA the CLI refuses the certificate.
	out, err = exec.Command(naradBin, "topic", "ls", "-s", "https://"+n.http).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "certificate") {
		t.Fatalf("an unverified certificate was accepted: %v\n%s", err, out)
	}
	// Plain HTTP gets no API answer.
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + n.http + "/v1/topics")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the API answered plain HTTP")
		}
	}
}
