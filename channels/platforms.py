"""Every chat platform the gateway can run, one line each: a new platform is its folder, its tests folder and its
line here (with its config section in bot/config/channels/)."""

from __future__ import annotations

from channels import discord, email, irc, matrix, mattermost, signal, slack, teams, telegram, whatsapp, xmpp
from channels.kind import Kind

KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        telegram.KIND,
        discord.KIND,
        slack.KIND,
        matrix.KIND,
        whatsapp.KIND,
        email.KIND,
        mattermost.KIND,
        signal.KIND,
        irc.KIND,
        xmpp.KIND,
        teams.KIND,
    )
}
"""The platforms by name, in the order their bots start and `relaybot doctor` lists them."""
