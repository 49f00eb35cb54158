package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

const defaultServer = "http://127.0.0.1:7942"

// defaultRetryFor is how long a command waits for a node that is starting,
// restarting or briefly unavailable: long enough for a node started a
// moment earlier ("narad server start --dev &" then a command), short
// enough that a wrong address fails within a coffee sip.
const defaultRetryFor = 30 * time.Second

// retryPace is the pause schedule of the CLI's retries: the client's
// default; a variable so tests need not wait.
var retryPace = client.Backoff{}

// target is the broker a client command talks to and who it is.
type target struct {
	server, user, password string
}

// clientFlags puts the flags of every command that talks to a broker on
// cmd and its subcommands: --server, --user, --password, --context,
// --ca-file and --retry-for. They are not global: "serve" and "server
// start" run a broker and have no use for them.
func (a *app) clientFlags(cmd *cobra.Command) *cobra.Command {
	pf := cmd.PersistentFlags()
	pf.StringVarP(&a.server, "server", "s", "", "broker URL (env NARAD_ADDR, default "+defaultServer+")")
	pf.StringVarP(&a.user, "user", "u", "", "user name (env NARAD_USER)")
	pf.StringVarP(&a.password, "password", "p", "", "password to sign in with; visible to other local users, prefer env NARAD_PASS or a context")
	pf.StringVar(&a.contextName, "context", "", `saved context to use instead of the selected one (see "narad ctx")`)
	pf.StringVar(&a.caFile, "ca-file", "", "CA certificate (PEM) to verify an https:// broker with (env NARAD_CA_FILE; default: the system's roots)")
	pf.Var(&retryForValue{a: a}, "retry-for", "how long to wait for a node that is starting or unavailable, retrying (env NARAD_RETRY_FOR, default "+
		formatMs(defaultRetryFor.Milliseconds())+"; 0: fail at once)")
	_ = cmd.RegisterFlagCompletionFunc("context", a.completeContexts)
	return cmd
}

// retryForValue is --retry-for: set only when typed, so NARAD_RETRY_FOR
// applies otherwise.
type retryForValue struct{ a *app }

func (v *retryForValue) Set(s string) error {
	var d time.Duration
	if err := newDurationValue(&d, 0).Set(s); err != nil {
		return err
	}
	v.a.retryFor = &d
	return nil
}

func (v *retryForValue) String() string {
	if v.a == nil || v.a.retryFor == nil {
		return ""
	}
	return formatMs(v.a.retryFor.Milliseconds())
}

func (v *retryForValue) Type() string { return "duration" }

// retryBudget is --retry-for, else NARAD_RETRY_FOR, else the default.
func (a *app) retryBudget() (time.Duration, error) {
	if a.retryFor != nil {
		return *a.retryFor, nil
	}
	if s := a.env("NARAD_RETRY_FOR"); s != "" {
		var d time.Duration
		if err := newDurationValue(&d, 0).Set(s); err != nil {
			return 0, fmt.Errorf("NARAD_RETRY_FOR %q: %v (want e.g. 30s, 2m, or 0 to fail at once)", s, err)
		}
		return d, nil
	}
	return defaultRetryFor, nil
}

// resolveTarget picks each of server, user and password independently:
// flag, then environment, then the saved context (--context, else the
// selected one; see contexts.go), then default. The contexts file is read
// only when flags and environment leave a field open or --context is
// given, so a broken file cannot get in the way of a fully explicit call.
func (a *app) resolveTarget() (target, error) {
	t := target{
		server:   first(a.server, a.env("NARAD_ADDR")),
		user:     first(a.user, a.env("NARAD_USER")),
		password: first(a.password, a.env("NARAD_PASS")),
	}
	if a.contextName != "" || t.server == "" || t.user == "" || t.password == "" {
		saved, err := a.activeContext()
		if err != nil {
			return target{}, err
		}
		t.server = first(t.server, saved.Server)
		t.user = first(t.user, saved.User)
		t.password = first(t.password, saved.Password)
	}
	if t.server == "" {
		t.server = defaultServer
	}
	if t.user == "" && t.password != "" {
		// The broker's only built-in account is the admin; a password on
		// its own means that one.
		t.user = "admin"
	}
	return t, nil
}

// checkServerURL refuses what cannot be a broker's address: another scheme
// (a typo such as "htp://", or "ftp://"), no host, or a query, fragment
// or user the client would silently drop or mangle. A path is a prefix (a
// broker behind a reverse proxy). A bare "host:port" is allowed on the
// command line (it means http://) but not saved.
func checkServerURL(s string, bareOK bool) error {
	if !strings.Contains(s, "://") {
		if bareOK {
			s = "http://" + s
		} else {
			return fmt.Errorf("%q is not a URL: want http://HOST:PORT or https://HOST:PORT (did you mean http://%s?)", s, s)
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: the scheme must be http or https, not %q", s, u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%q has no host: want http://HOST:PORT or https://HOST:PORT", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: give the broker's address without a query, fragment or credentials (credentials go in --user and the password)", s)
	}
	return nil
}

// client builds the API client for the resolved target.
func (a *app) client() (*client.Client, error) {
	t, err := a.resolveTarget()
	if err != nil {
		return nil, err
	}
	return a.clientFor(t)
}

// clientFor builds the API client for t, for a command that also needs the
// resolved fields themselves. With --ca-file (NARAD_CA_FILE) it verifies an
// https:// broker against that CA instead of the system's roots. Its calls
// wait for a starting or briefly unavailable node for the retry budget,
// saying so once on stderr (see waiter).
func (a *app) clientFor(t target) (*client.Client, error) {
	a.warnArgvPassword("")
	if err := checkServerURL(t.server, true); err != nil {
		return nil, fmt.Errorf("server %w", err)
	}
	hc, err := a.httpClient()
	if err != nil {
		return nil, err
	}
	budget, err := a.retryBudget()
	if err != nil {
		return nil, err
	}
	w := &waiter{a: a, server: strings.TrimRight(t.server, "/"), budget: budget}
	c := client.New(t.server, t.user, t.password, hc, client.WithRetry(client.RetryPolicy{
		MaxElapsed: budget,
		Backoff:    retryPace,
		OnRetry:    w.onRetry,
	}))
	return c, nil
}

// quickClient is a client that never waits: shell completion must answer
// at once, and quietly give nothing when no node answers.
func (a *app) quickClient() (*client.Client, error) {
	t, err := a.resolveTarget()
	if err != nil {
		return nil, err
	}
	if err := checkServerURL(t.server, true); err != nil {
		return nil, err
	}
	hc, err := a.httpClient()
	if err != nil {
		return nil, err
	}
	hc.Timeout = completionTimeout
	return client.New(t.server, t.user, t.password, hc), nil
}

// httpClient is a fresh HTTP client for this run; it trusts --ca-file
// (NARAD_CA_FILE) when given, else the system's roots.
func (a *app) httpClient() (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 64 // concurrent producers (bench) each keep one
	if ca := first(a.caFile, a.env("NARAD_CA_FILE")); ca != "" {
		pool, err := loadCA(ca)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}, nil
}

func (a *app) env(name string) string {
	if a.lookupEnv == nil {
		return ""
	}
	v, _ := a.lookupEnv(name)
	return v
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// loadCA reads the CA in file (a broker serving HTTPS with a private CA's
// certificate).
func loadCA(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca-file %s: no PEM certificate in it", file)
	}
	return pool, nil
}
