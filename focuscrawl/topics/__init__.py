"""The topic side: the taxonomy and its examples, a topic made from a user's pages in
the shipped background, labels, and the link model every program shares."""
