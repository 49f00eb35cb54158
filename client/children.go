package client

import (
	"context"
	"net/http"
	"net/url"
)

// Child is one entry of the children listing
// (GET /v1/topics/{parent}/children).
type Child struct {
	Name            string   `json:"name"`
	DelayMs         int64    `json:"delay_ms"`
	AttachEpoch     string   `json:"attach_epoch"`
	LagMessages     uint64   `json:"lag_messages"`
	DueLagSeconds   *float64 `json:"due_lag_seconds,omitempty"` // delay children only
	LagComplete     bool     `json:"lag_complete"`
	DroppedMessages uint64   `json:"dropped_messages"`
}

// Children lists the topics attached to parent, with their lag.
func (c *Client) Children(ctx context.Context, parent string) ([]Child, error) {
	if parent == "" {
		return nil, errEmptyName
	}
	var out struct {
		Children []Child `json:"children"`
	}
	if _, err := c.doJSON(ctx, http.MethodGet, topicPath(parent, "children"), nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Children, nil
}

// AttachRequest attaches Child to a parent; the child receives every parent
// record DelayMs after it was appended.
type AttachRequest struct {
	Child   string `json:"child"`
	DelayMs int64  `json:"delay_ms,omitempty"`
}

// Attach attaches a child topic: POST /v1/topics/{p}/children.
func (c *Client) Attach(ctx context.Context, parent string, req AttachRequest) error {
	if parent == "" || req.Child == "" {
		return errEmptyName
	}
	_, err := c.doJSON(ctx, http.MethodPost, topicPath(parent, "children"), nil, req, nil)
	return err
}

// Detach detaches a child: DELETE /v1/topics/{p}/children/{c}.
func (c *Client) Detach(ctx context.Context, parent, child string) error {
	if parent == "" || child == "" {
		return errEmptyName
	}
	_, err := c.doJSON(ctx, http.MethodDelete, topicPath(parent, "children", url.PathEscape(child)), nil, nil, nil)
	return err
}
