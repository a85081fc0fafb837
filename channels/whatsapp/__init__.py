"""WhatsApp: the Business Cloud API's signed webhook in, the Graph API out (plain aiohttp)."""
