package main

import (
	"fmt"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

func (a *app) userKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage a user's access keys, for the SQS/SNS edge",
		Long: `Manage the access keys of a user: an AWS-style key ID and secret that
SQS and SNS clients (the AWS SDKs and CLI) sign requests with (Signature
Version 4; docs/security.md, "Access keys and AWS signatures").

A user holds at most 2 keys: rotate by adding a second, moving clients to
it, then removing the first. You manage your own keys; an admin manages
those of the users it may manage.`,
	}
	cmd.AddCommand(a.userKeysAddCmd(), a.userKeysListCmd(), a.userKeysRemoveCmd())
	return cmd
}

// secretShownOnce is the warning that goes with a new key's secret.
const secretShownOnce = "narad: warning: the secret access key is shown this once and cannot be shown again: store it now\n"

func (a *app) userKeysAddCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Create an access key for a user; prints its secret, this once",
		Long: `Create an access key for the user NAME and print its ID and secret. The
secret is shown this once: the server keeps it sealed and never answers it
again. -o json prints {"access_key_id", "secret_access_key", "created_at"}.

  narad user keys add billing`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeUsers,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			k, err := c.CreateAccessKey(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprint(a.stderr, secretShownOnce)
			if format == formatJSON {
				return printJSON(a.stdout, k)
			}
			_, err = fmt.Fprintf(a.stdout, "created access key %s for %s\naccess key id:     %s\nsecret access key: %s\n",
				k.AccessKeyID, args[0], k.AccessKeyID, k.SecretAccessKey)
			return err
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) userKeysListCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:               "ls NAME",
		Aliases:           []string{"list"},
		Short:             "List a user's access keys (never their secrets)",
		Long:              `List the access keys of the user NAME, oldest first. -o json prints {"access_keys": [{"access_key_id", "created_at"}]}.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeUsers,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			keys, err := c.ListAccessKeys(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, struct {
					AccessKeys []client.AccessKey `json:"access_keys"`
				}{nonNil(keys)})
			}
			tw := newTable(a.stdout)
			fmt.Fprintln(tw, "ACCESS KEY ID\tCREATED")
			for _, k := range keys {
				fmt.Fprintf(tw, "%s\t%s\n", k.AccessKeyID, time.Unix(k.CreatedAt, 0).UTC().Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) userKeysRemoveCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:     "rm NAME ID",
		Aliases: []string{"delete"},
		Short:   "Revoke a user's access key",
		Long: `Revoke the access key ID of the user NAME: requests signed with it are
refused from then on. -o json prints {"username": NAME, "access_key_id": ID, "deleted": true}.`,
		Args: cobra.ExactArgs(2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return a.completeUsers(cmd, args, toComplete)
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			if err := c.DeleteAccessKey(cmd.Context(), args[0], args[1]); err != nil {
				return err
			}
			return printDone(a.stdout, format, struct {
				Username    string `json:"username"`
				AccessKeyID string `json:"access_key_id"`
				Deleted     bool   `json:"deleted"`
			}{args[0], args[1], true}, "revoked access key "+args[1]+" of "+args[0])
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}
