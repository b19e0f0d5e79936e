"""Input readers: YAML and JSON files read into plain data, with errors that name the file, line and field."""
