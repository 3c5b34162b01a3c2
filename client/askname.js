// Before a friend's link seats a browser that has never chosen a name, it asks for one (prefilled
// with the name the server gave, e.g. guest-3f2a), so the game, its record and the replay carry
// the player's name from the first move. The name is remembered like the one in the header.

// Resolves with {name, watch}: the name typed (trimmed, may equal `suggested`) and whether the
// player chose to watch instead of taking the seat. Enter joins (Join is the form's first
// button); Escape closes the dialog without a seat, as "Just watch" does.
export function askName(dialog, suggested) {
  const input = dialog.querySelector("input");
  input.value = suggested || "";
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => resolve({ name: input.value.trim() || suggested, watch: dialog.returnValue !== "join" }),
      { once: true },
    );
    dialog.returnValue = "";
    dialog.showModal();
    input.select();
  });
}
