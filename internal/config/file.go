package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// The JSON file nests settings by section: {"http":{"addr":…},"node_id":…}.
// Keys are walked against the settings table rather than decoded with
// json.Decoder.DisallowUnknownFields, because that error names only the leaf
// ("addr") and an operator needs the full key ("htpp.addr") to find a typo.

// applyFile reads path and applies every key in it to c.
func applyFile(c *Config, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	if err := applyJSON(c, data); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

func applyJSON(c *Config, data []byte) error {
	top, err := decodeObject(data)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(top) {
		if isSection(name) {
			section, err := decodeObject(top[name])
			if err != nil {
				return fmt.Errorf("%s: must be an object: %w", name, err)
			}
			for _, sub := range sortedKeys(section) {
				if err := applyFileKey(c, name+"."+sub, section[sub]); err != nil {
					return err
				}
			}
			continue
		}
		if err := applyFileKey(c, name, top[name]); err != nil {
			return err
		}
	}
	return nil
}

func applyFileKey(c *Config, key string, raw json.RawMessage) error {
	s, ok := lookup(key)
	if !ok {
		return fmt.Errorf("unknown key %q", key)
	}
	if s.secret {
		return fmt.Errorf("%s is a secret and is read from the environment only (%s), not from a file", key, s.env)
	}
	text, err := fileText(s, raw)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if err := s.set(c, text); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// fileText turns a JSON value into the text form every layer shares, after
// checking the JSON type suits the setting: a port written as a number or a
// timeout written as a bare number is a mistake worth reporting, except for
// *_ms settings, where a number is the natural spelling.
func fileText(s setting, raw json.RawMessage) (string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	switch p := s.field(&Config{}).(type) {
	case *string:
		if str, ok := v.(string); ok {
			return str, nil
		}
		return "", errors.New("want a string")
	case *int, *int64:
		if n, ok := v.(json.Number); ok {
			return n.String(), nil
		}
		return "", errors.New("want an integer")
	case *bool:
		if b, ok := v.(bool); ok {
			return fmt.Sprint(b), nil
		}
		return "", errors.New("want true or false")
	case *time.Duration:
		switch x := v.(type) {
		case string:
			return x, nil
		case json.Number:
			if s.millis {
				return x.String(), nil
			}
		}
		if s.millis {
			return "", errors.New("want milliseconds or a duration string like \"30s\"")
		}
		return "", errors.New("want a duration string like \"10s\"")
	case *[]string, *[]Peer:
		switch x := v.(type) {
		case string:
			return x, nil
		case []any:
			items := make([]string, 0, len(x))
			for _, item := range x {
				str, ok := item.(string)
				if !ok || strings.Contains(str, ",") {
					return "", errors.New("want an array of strings without commas, or one comma-separated string")
				}
				items = append(items, str)
			}
			return strings.Join(items, ","), nil
		}
		return "", errors.New("want an array of strings or a comma-separated string")
	default:
		panic(fmt.Sprintf("config: setting %s has unsupported type %T", s.key, p))
	}
}

// decodeObject decodes one JSON object and refuses anything after it.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("want a JSON object, got null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON object")
	}
	return obj, nil
}

// isSection reports whether name is a section prefix in the settings table.
func isSection(name string) bool {
	for _, s := range settings {
		if strings.HasPrefix(s.key, name+".") {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
