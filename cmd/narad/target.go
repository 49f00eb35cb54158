package main

import (
	"github.com/narad-io/narad/internal/client"
)

const defaultServer = "http://127.0.0.1:7942"

// target is the broker a client command talks to and who it is.
type target struct {
	server, user, password string
}

// resolveTarget picks each of server, user and password independently:
// flag, then environment, then default.
//
// Seam for named contexts: a saved context (server + credentials, chosen
// by --context or a current-context file) slots in between the environment
// and the defaults here, and nothing else has to change.
func (a *app) resolveTarget() target {
	t := target{
		server:   first(a.server, a.env("NARAD_ADDR")),
		user:     first(a.user, a.env("NARAD_USER")),
		password: first(a.password, a.env("NARAD_PASS")),
	}
	if t.server == "" {
		t.server = defaultServer
	}
	if t.user == "" && t.password != "" {
		// The broker's only built-in account is the admin; a password on
		// its own means that one.
		t.user = "admin"
	}
	return t
}

// client builds the API client for the resolved target.
func (a *app) client() *client.Client {
	t := a.resolveTarget()
	return client.New(t.server, t.user, t.password, nil)
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
