package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

// Shell completion ("narad completion bash|zsh|fish", cobra's) completes
// topic, child, user and member names from the server and context names
// from the contexts file. A completion must never hang a shell or print an
// error into it: it asks once, without retries, for at most
// completionTimeout, and offers nothing when the server does not answer.
const completionTimeout = 2 * time.Second

type completeFunc = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective)

const noFiles = cobra.ShellCompDirectiveNoFileComp

// completeTopics completes the first argument with topic names.
func (a *app) completeTopics(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return a.completeTopicsAt(1)(cmd, args, toComplete)
}

// completeTopicsAt completes the first n arguments with topic names.
func (a *app) completeTopicsAt(n int) completeFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) >= n {
			return nil, noFiles
		}
		return a.topicNames(cmd, toComplete), noFiles
	}
}

// completeTopicFlag completes a flag whose value is a topic (--parent).
func (a *app) completeTopicFlag(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return a.topicNames(cmd, toComplete), noFiles
}

// completeParentThenChild completes "PARENT CHILD": topics, then the
// children of the parent given.
func (a *app) completeParentThenChild(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		return a.topicNames(cmd, toComplete), noFiles
	case 1:
		return a.ask(cmd, toComplete, func(ctx context.Context, c *client.Client) ([]string, error) {
			kids, err := c.Children(ctx, args[0])
			names := make([]string, 0, len(kids))
			for _, k := range kids {
				names = append(names, k.Name)
			}
			return names, err
		}), noFiles
	}
	return nil, noFiles
}

// completeUsers completes the first argument with user names.
func (a *app) completeUsers(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	return a.ask(cmd, toComplete, func(ctx context.Context, c *client.Client) ([]string, error) {
		users, err := c.ListUsers(ctx)
		names := make([]string, 0, len(users))
		for _, u := range users {
			names = append(names, u.Username)
		}
		return names, err
	}), noFiles
}

// completeMembers completes the first argument with member ids.
func (a *app) completeMembers(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	return a.ask(cmd, toComplete, func(ctx context.Context, c *client.Client) ([]string, error) {
		members, err := c.Members(ctx)
		ids := make([]string, 0, len(members))
		for _, m := range members {
			ids = append(ids, m.ID)
		}
		return ids, err
	}), noFiles
}

// completeContexts completes saved context names (the first argument, or
// the value of --context); it reads the local file, never the server.
func (a *app) completeContexts(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 && cmd.Flags().Lookup("context") == nil {
		return nil, noFiles
	}
	cf, err := a.loadContexts()
	if err != nil {
		return nil, noFiles
	}
	names := make([]string, 0, len(cf.Contexts))
	for name := range cf.Contexts {
		names = append(names, name)
	}
	return matching(names, toComplete), noFiles
}

// completeContextArg completes the NAME of "ctx select" and "ctx rm".
func (a *app) completeContextArg(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	return a.completeContexts(cmd, args, toComplete)
}

func (a *app) topicNames(cmd *cobra.Command, toComplete string) []string {
	return a.ask(cmd, toComplete, func(ctx context.Context, c *client.Client) ([]string, error) {
		topics, err := allTopics(ctx, c)
		names := make([]string, 0, len(topics))
		for _, t := range topics {
			names = append(names, t.Name)
		}
		return names, err
	})
}

// ask runs one quick request for completions; any failure (no server, no
// credentials, a slow answer) is no completions.
func (a *app) ask(cmd *cobra.Command, toComplete string, list func(context.Context, *client.Client) ([]string, error)) []string {
	c, err := a.quickClient()
	if err != nil {
		return nil
	}
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, completionTimeout)
	defer cancel()
	names, err := list(ctx, c)
	if err != nil {
		return nil
	}
	return matching(names, toComplete)
}

// matching keeps the names that start with prefix, sorted.
func matching(names []string, prefix string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
