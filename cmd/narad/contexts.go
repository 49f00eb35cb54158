package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// savedContext is one named broker and the credentials to use there.
type savedContext struct {
	Server   string `json:"server"`
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
}

// contextFile is contexts.json: the saved contexts and the selected one.
type contextFile struct {
	Current  string                  `json:"current,omitempty"`
	Contexts map[string]savedContext `json:"contexts"`

	path string // where it was read from, for messages and for save
}

// errNoConfigDir is why context commands cannot run: neither
// XDG_CONFIG_HOME nor a home directory says where the file lives.
var errNoConfigDir = errors.New("cannot locate contexts.json: set XDG_CONFIG_HOME or HOME")

// contextsPath is $XDG_CONFIG_HOME/narad/contexts.json, else
// ~/.config/narad/contexts.json. It returns errNoConfigDir when neither
// is known; a relative XDG_CONFIG_HOME is ignored, as the XDG spec asks,
// so the file never depends on the working directory.
func (a *app) contextsPath() (string, error) {
	if dir := a.env("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "narad", "contexts.json"), nil
	}
	if a.home == nil {
		return "", errNoConfigDir
	}
	home, err := a.home()
	if err != nil || home == "" {
		return "", errNoConfigDir
	}
	return filepath.Join(home, ".config", "narad", "contexts.json"), nil
}

// loadContexts reads contexts.json; a missing file is an empty one. Errors
// name the file, since the usual fix is to look at it or delete it.
func (a *app) loadContexts() (*contextFile, error) {
	path, err := a.contextsPath()
	if err != nil {
		return nil, err
	}
	cf := &contextFile{path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		cf.Contexts = map[string]savedContext{}
		return cf, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading contexts file: %w", err)
	}
	if err := json.Unmarshal(data, cf); err != nil {
		return nil, fmt.Errorf("contexts file %s is not valid: %v (fix or delete it)", path, err)
	}
	if cf.Contexts == nil {
		cf.Contexts = map[string]savedContext{}
	}
	return cf, nil
}

// lookup returns the context called name, or an error naming the file.
func (cf *contextFile) lookup(name string) (savedContext, error) {
	c, ok := cf.Contexts[name]
	if !ok {
		return savedContext{}, notFound("no context %q in %s (see \"narad ctx ls\")", name, cf.path)
	}
	return c, nil
}

// save writes the file atomically: a crash or a full disk leaves the old
// file or the new one, never half of one. It holds passwords, so the file
// is 0600 and a directory it creates is 0700.
func (cf *contextFile) save() error {
	data, err := json.MarshalIndent(cf, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(cf.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving contexts: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".contexts-*.json") // created 0600
	if err != nil {
		return fmt.Errorf("saving contexts: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Chmod(0o600) // CreateTemp's mode is not a promise of its API
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), cf.path)
	}
	if err != nil {
		return fmt.Errorf("saving contexts to %s: %w", cf.path, err)
	}
	return nil
}

// activeContext is the context client commands fall back to: --context
// when given, else the selected one, else none (zero value, no error). A
// missing file only matters when --context asked for something in it.
func (a *app) activeContext() (savedContext, error) {
	if a.contextName == "" {
		if _, err := a.contextsPath(); err != nil {
			return savedContext{}, nil // nowhere to look: nothing saved
		}
	}
	cf, err := a.loadContexts()
	if err != nil {
		return savedContext{}, err
	}
	if a.contextName != "" {
		return cf.lookup(a.contextName)
	}
	if cf.Current == "" {
		return savedContext{}, nil
	}
	c, ok := cf.Contexts[cf.Current]
	if !ok {
		return savedContext{}, fmt.Errorf("the selected context %q is missing from %s (run \"narad ctx select\")", cf.Current, cf.path)
	}
	return c, nil
}
