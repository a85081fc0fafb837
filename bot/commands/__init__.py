"""The built-in commands: declared once in the catalogue, recognised in text by one parser."""
