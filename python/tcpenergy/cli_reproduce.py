"""The `reproduce` commands of the tcpenergy CLI (registered on `tcpenergy.cli.app`)."""
