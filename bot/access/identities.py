"""One person across apps: the config's `identities` plus accounts linked at pairing (`approve … --as`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping


class Identities:
    """Which person an account (`channel:user_id`) belongs to, and a person's accounts."""

    def __init__(self, configured: Mapping[str, list[str]], linked: Callable[[], Mapping[str, str]] = dict) -> None:
        self._configured = {account: person for person, accounts in configured.items() for account in accounts}
        self._linked = linked

    def person_of(self, channel: str, user_id: str) -> str | None:
        """The person the account belongs to (the config wins over a pairing link), or None."""
        account = f"{channel}:{user_id}"
        return self._configured.get(account) or self._linked().get(account)

    def accounts_of(self, person: str) -> set[str]:
        """Every account of the person, configured or linked."""
        linked = {account for account, name in self._linked().items() if name == person}
        return {account for account, name in self._configured.items() if name == person} | linked

    def refs_of(self, channel: str, user_id: str) -> set[str]:
        """Every name roles and owners may list the account under: itself, and its person with all their accounts."""
        person = self.person_of(channel, user_id)
        if person is None:
            return {f"{channel}:{user_id}"}
        return {person, f"{channel}:{user_id}", *self.accounts_of(person)}


NOBODY = Identities({})
"""No identities: every account is its own person."""
