"""The code that answers the built-in commands (declared in `bot.commands.catalogue`) and plugin commands."""
