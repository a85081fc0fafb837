from bot.bus import Attachment
from channels.telegram.files import upload_groups


def test_photos_and_documents_go_in_separate_groups_of_at_most_ten_in_order() -> None:
    photos = [Attachment(f"/p{n}.png", "image/png", "image") for n in range(12)]
    documents = [Attachment("/a.pdf", "application/pdf", "file"), Attachment("/b.txt", "text/plain", "file")]
    groups = upload_groups([documents[0], *photos, documents[1]])
    assert groups == [photos[:10], photos[10:], documents]


def test_one_file_is_a_group_of_one() -> None:
    only = Attachment("/a.pdf", "application/pdf", "file")
    assert upload_groups([only]) == [[only]]


def test_voice_notes_go_one_by_one_after_the_albums() -> None:
    voice = Attachment("/reply.ogg", "audio/ogg", "voice")
    document = Attachment("/a.pdf", "application/pdf", "file")
    assert upload_groups([voice, document]) == [[document], [voice]]
