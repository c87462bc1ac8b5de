"""Contact rows: a rigid contact's normal, friction and angular rows, their history, patches and dormancy."""
