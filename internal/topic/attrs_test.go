package topic

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

func TestValidateTags(t *testing.T) {
	many := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("k%02d", i)] = "v"
		}
		return m
	}
	for name, tc := range map[string]struct {
		tags map[string]string
		ok   bool
	}{
		"none":            {nil, true},
		"50":              {many(50), true},
		"51":              {many(51), false},
		"empty value":     {map[string]string{"k": ""}, true},
		"empty key":       {map[string]string{"": "v"}, false},
		"key 128 bytes":   {map[string]string{strings.Repeat("é", 64): "v"}, true},
		"key 129 bytes":   {map[string]string{strings.Repeat("k", 129): "v"}, false},
		"value 256 bytes": {map[string]string{"k": strings.Repeat("v", 256)}, true},
		"value 257 bytes": {map[string]string{"k": strings.Repeat("v", 257)}, false},
		"aws: key":        {map[string]string{"aws:cost": "v"}, false},
		"AWS: key":        {map[string]string{"AWS:cost": "v"}, false},
		"aws in a key":    {map[string]string{"team:aws:x": "v"}, true},
		"not UTF-8":       {map[string]string{"k": "\xff"}, false},
	} {
		err := ValidateTags(tc.tags)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("%s: %v is not invalid", name, err)
		}
	}
}

func TestValidateAWSAttributes(t *testing.T) {
	for name, tc := range map[string]struct {
		attrs map[string]string
		ok    bool
	}{
		"none":        {nil, true},
		"known":       {map[string]string{"Policy": "{}", "DisplayName": "x", "FifoTopic": "true"}, true},
		"unknown":     {map[string]string{"VisibilityTimeout": "30"}, false},
		"case":        {map[string]string{"policy": "{}"}, false},
		"10 KiB":      {map[string]string{"Policy": strings.Repeat("p", 10<<10)}, true},
		"over 10 KiB": {map[string]string{"Policy": strings.Repeat("p", 10<<10+1)}, false},
		"total 32 KiB": {map[string]string{"Policy": strings.Repeat("p", 10<<10), "DeliveryPolicy": strings.Repeat("p", 10<<10),
			"ArchivePolicy": strings.Repeat("p", 10<<10), "RedriveAllowPolicy": strings.Repeat("p", 2<<10)}, false},
	} {
		err := ValidateAWSAttributes(tc.attrs)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", name, err, tc.ok)
		}
	}
	err := ValidateAWSAttributes(map[string]string{"Nope": ""})
	if err == nil || !strings.Contains(err.Error(), "ReceiveMessageWaitTimeSeconds") {
		t.Fatalf("an unknown key's refusal names the allowed ones: %v", err)
	}
}

// A record written before modified_at shows created_at; a later one its own.
func TestViewModifiedAt(t *testing.T) {
	if v := ViewOf(meta.Topic{Name: "a", CreatedAt: 5}); v.ModifiedAt != 5 {
		t.Fatalf("old record: modified_at %d", v.ModifiedAt)
	}
	if v := ViewOf(meta.Topic{Name: "a", CreatedAt: 5, ModifiedAt: 9}); v.ModifiedAt != 9 {
		t.Fatalf("modified_at %d", v.ModifiedAt)
	}
}
