"""The `sweep, summarize and export` commands of the tcpenergy CLI (registered on `tcpenergy.cli.app`)."""
