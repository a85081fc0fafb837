"""The generate_image tool: a picture from a prompt, saved in the chat's outbox folder and sent as a photo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.bus import OutboundMessage
from bot.errors import BudgetExceeded, ProviderError, ToolError
from bot.llm.images import EXTENSIONS, ImageMaker
from bot.tools.base import Tool, ToolContext
from bot.tools.chat_files import ChatFiles
from bot.tools.outbox_files import outbox_attachment, save_to_outbox
from bot.tools.uploads import UploadLimits


class GenerateImageTool(Tool):
    """Draws with `tools.image.model` (metered like every model call) and sends the picture to this chat."""

    name = "generate_image"
    description = (
        "Draw a picture from a description and send it to this chat as a photo. Describe the subject, "
        "style and composition in detail. Returns where the picture was saved."
    )
    parameters = {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "minLength": 1, "description": "What to draw, in detail."},
            "caption": {"type": "string", "description": "A short text sent with the picture."},
        },
        "required": ["prompt"],
    }

    def __init__(
        self, images: ImageMaker, workspace: Path, uploads: UploadLimits, files: ChatFiles | None = None
    ) -> None:
        self._images = images
        self._workspace = workspace
        self._uploads = uploads
        self._files = files

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        try:
            image = await self._images.generate(str(args["prompt"]))
        except BudgetExceeded as exc:
            raise ToolError(exc.user_message) from exc
        except ProviderError as exc:
            raise ToolError(f"the image model could not draw it: {exc}") from exc
        suffix = EXTENSIONS.get(image.mime_type, ".png")
        path = save_to_outbox(self._workspace, ctx.chat, "image", suffix, image.data)
        shown = str(path.relative_to(self._workspace))
        if self._files is not None:  # a record of the chat's, like every file made for it
            shown += f", file_id {(await self._files.made(ctx, path)).id}"
        if not self._uploads.takes_files(ctx.chat):
            return f"Drew the picture and saved it as {shown}; this chat cannot show pictures, so tell the user where."
        attachment = outbox_attachment(path, image.mime_type)
        caption = str(args.get("caption") or "")
        await ctx.send(
            OutboundMessage(ctx.chat, caption, in_reply_to=ctx.turn_id, kind="progress", files=(attachment,))
        )
        return f"Drew the picture and sent it to this chat (saved as {shown}, {len(image.data):,} bytes)."
