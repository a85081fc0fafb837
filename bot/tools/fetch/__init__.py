"""web_fetch: a page as readable text, and the guard on the addresses it may reach."""
